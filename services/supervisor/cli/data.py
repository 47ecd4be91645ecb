"""`dla backup`, `dla restore`: the publishable database out, a backup file in.

Both run the writer's own tools (`python -m services.writer publish|restore`) as a process:
the writer owns the database format and the writer lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import out
from services.supervisor.cli.stack_client import CliSettings
from services.supervisor.datalock import DataDirBusy, DataDirLock


def writer_tool(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m services.writer ARGS` with this environment."""
    env = dict(os.environ, LOG_LEVEL="ERROR")
    return subprocess.run(
        [sys.executable, "-m", "services.writer", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].split(": ", 1)[-1] if lines else "no reason given"


def register(app: typer.Typer) -> None:
    """Add these subcommands to `dla`."""

    @app.command()
    def backup(
        output: Annotated[
            Path | None,
            typer.Option(
                "--output", "-o", help="Where (default `./dla-backup-<time>.sqlite3.gz`)."
            ),
        ] = None,
        private: Annotated[
            Path | None,
            typer.Option(
                "--private",
                help="Also write its private part here (the audit trail, the queued S3"
                " removals: not for publishing; `dla restore --private` puts it back).",
            ),
        ] = None,
    ) -> None:
        """Write the publishable database (taken-down links and the audit left out) as a
        gzip'ed SQLite file; it reads the database read-only, the stack may run."""
        settings = CliSettings()
        if not settings.db_path.exists():
            raise CliError(f"no database at {settings.db_path}", Exit.NOT_FOUND)
        dest = output or Path(f"dla-backup-{datetime.now(UTC):%Y%m%dT%H%M%S}.sqlite3.gz")
        for given in (dest, private):
            if given is not None and not given.name.endswith(".gz"):
                raise CliError("the backup is gzip'ed: give a file name ending in .gz", Exit.USAGE)
        extra = [] if private is None else ["--private-output", str(private.resolve())]
        done = writer_tool("publish", "--output", str(dest.resolve()), *extra)
        if done.returncode != 0:
            raise CliError(f"backup failed: {_last_line(done.stderr)}")
        size = done.stdout.split()[-1] if done.stdout.split() else "?"
        out.print(f"publishable database written to {dest} ({size} bytes)")
        if private is not None:
            out.print(f"its private part written to {private}")

    @app.command()
    def restore(
        file: Annotated[Path, typer.Argument(help="A backup (.sqlite3.gz or .sqlite3).")],
        private: Annotated[
            Path | None,
            typer.Option(
                "--private",
                help="Its private part (`private.sqlite3.gz` from `db-backups-private/<date>/`):"
                " the audit trail and the queued S3 removals are put back.",
            ),
        ] = None,
    ) -> None:
        """Install a backup as the database (only while `dla up` is stopped; the previous file
        is kept beside it)."""
        settings = CliSettings()
        for given in (file, private):
            if given is not None and not given.is_file():
                raise CliError(f"no such file: {given}", Exit.NOT_FOUND)
        extra = [] if private is None else ["--private", str(private.resolve())]
        lock = DataDirLock(settings.data_dir.resolve())
        try:
            lock.acquire("dla restore")
        except DataDirBusy as exc:
            raise CliError(f"stop the archive first: {exc}", Exit.BUSY) from None
        try:
            done = writer_tool("restore", "--file", str(file.resolve()), *extra)
        finally:
            lock.release()
        if done.returncode == 3:
            raise CliError(f"stop the archive first: {_last_line(done.stderr)}", Exit.BUSY)
        if done.returncode != 0:
            raise CliError(f"restore refused: {_last_line(done.stderr)}", Exit.INVALID)
        out.print(done.stdout.strip() or f"restored {file}")
