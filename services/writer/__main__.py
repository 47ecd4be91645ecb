"""``python -m services.writer`` runs the writer; ``... restore [--date D]`` restores a backup."""

from __future__ import annotations

import sys

from services.writer.backup import restore_cli
from services.writer.service import Writer
from services.writer.settings import WriterSettings
from shared import lifecycle
from shared.logs import setup_logging


def main(argv: list[str] | None = None) -> None:
    """Process entry point."""
    args = sys.argv[1:] if argv is None else argv
    settings = WriterSettings()
    if args and args[0] == "restore":
        setup_logging(settings.log_level, "writer-restore")
        sys.exit(restore_cli(args[1:], settings))
    writer = Writer(settings)
    lifecycle.main("writer", lambda: settings, writer.run, lambda _ctx: writer.health)


if __name__ == "__main__":
    main()
