"""What a failed end-to-end wait prints: the tails of the services' logs and what the
database holds (so a capture that never showed can be told from a writer that never applied
it, or a web service that never answered)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

TAIL_CHARS = 4000
"""How much of the end of each log is shown."""

COUNTS = {
    "links": "SELECT count(*) FROM links",
    "artifacts": "SELECT count(*) FROM artifacts",
    "jobs by kind and status": "SELECT kind, status, count(*) FROM archive_jobs"
    " GROUP BY kind, status",
}


def log_tails(paths: Iterable[Path], chars: int = TAIL_CHARS) -> str:
    """The last `chars` characters of each log file, headed by its name."""
    return "\n".join(
        f"--- {p.parent.name}/{p.name}\n{p.read_text(errors='replace')[-chars:]}"
        for p in sorted(paths)
        if p.is_file()
    )


def database_counts(db: Path) -> str:
    """A few counts read from the database (read-only), or why they could not be."""
    if not db.exists():
        return f"--- database: {db} does not exist"
    lines = [f"--- database {db.name}"]
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            for what, sql in COUNTS.items():
                lines.append(f"{what}: {conn.execute(sql).fetchall()}")
    except sqlite3.Error as exc:
        lines.append(f"cannot read it: {exc}")
    return "\n".join(lines)
