"""`dla up`: run the whole archiver on this machine until Ctrl-C / SIGTERM."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from services.supervisor.stack import SERVICES
from services.supervisor.up import run_up
from shared.logs import setup_logging

log = logging.getLogger("dla")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dla` command."""
    parser = argparse.ArgumentParser(prog="dla", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start everything on this machine")
    p_up.add_argument("--without", action="append", choices=SERVICES, help="skip a service")
    args = parser.parse_args(argv)
    setup_logging(os.environ.get("LOG_LEVEL", "INFO"), "dla")
    if args.cmd == "up":
        data_dir = Path(os.environ.get("DATA_DIR", "./data")).resolve()
        services = [s for s in SERVICES if s not in set(args.without or [])]
        port = os.environ.get("WEB_PORT", "8000")
        host = os.environ.get("WEB_HOST", "127.0.0.1")
        return run_up(data_dir, services, f"http://{host}:{port}/")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
