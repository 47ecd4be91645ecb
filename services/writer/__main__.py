"""``python -m services.writer`` runs the writer; ``... restore [--date D | --file F]`` restores
a backup; ``... publish --output F`` writes the publishable database (used by `dla`)."""

from __future__ import annotations

import sys

from services.writer.backup import publish_cli, restore_cli
from services.writer.settings import WriterSettings
from shared.logs import setup_logging
from shared.setting_names import built_or_exit


def main(argv: list[str] | None = None) -> None:
    """Process entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "restore":
        settings = built_or_exit(WriterSettings, "writer-restore")
        setup_logging(settings.log_level, "writer-restore")
        sys.exit(restore_cli(args[1:], settings))
    if args and args[0] == "publish":
        settings = built_or_exit(WriterSettings, "writer-publish")
        setup_logging(settings.log_level, "writer-publish")
        sys.exit(publish_cli(args[1:], settings))
    # imported only to run the service: restore and publish (each `dla backup` and `dla
    # restore`) would pay ~2 s of CPU for the whole writer they do not use
    from services.writer.service import SERVICE

    SERVICE.main()


if __name__ == "__main__":
    main()
