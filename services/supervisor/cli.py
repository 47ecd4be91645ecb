"""`dla up`: run the whole archiver on this machine until Ctrl-C / SIGTERM."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from pathlib import Path

from services.supervisor.stack import SERVICES, Stack
from shared.logs import setup_logging

log = logging.getLogger("dla")


def up(args: argparse.Namespace) -> int:
    """Start engines and services, print the UI address, supervise until asked to stop."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    data_dir = Path(os.environ.get("DATA_DIR", "./data")).resolve()
    services = [s for s in SERVICES if s not in set(args.without or [])]
    stack = Stack(data_dir=data_dir, services=services)
    try:
        stack.start_engines()
        log.info(
            "NATS at %s, S3 at %s, data in %s",
            stack.env["NATS_URL"],
            stack.env["S3_ENDPOINT"],
            data_dir,
        )
        stack.start_services()
        port = os.environ.get("WEB_PORT", "8000")
        host = os.environ.get("WEB_HOST", "127.0.0.1")
        url = f"http://{host}:{port}/"
        print(f"\n  Discourse Link Archiver is up: {url}\n  logs: {data_dir}/logs\n", flush=True)
        while not stop.wait(1.0):
            stack.supervise_once()
    finally:
        log.info("stopping")
        stack.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dla` command."""
    parser = argparse.ArgumentParser(prog="dla", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start everything on this machine")
    p_up.add_argument("--without", action="append", choices=SERVICES, help="skip a service")
    args = parser.parse_args(argv)
    setup_logging(os.environ.get("LOG_LEVEL", "INFO"), "dla")
    if args.cmd == "up":
        return up(args)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
