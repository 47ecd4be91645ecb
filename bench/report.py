"""Writes one benchmark's section into docs/benchmarks.md, replacing its previous run."""

from __future__ import annotations

import platform
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADER = (
    "# Benchmarks\n\n"
    "Produced by `make bench` (or the command under each section). Newest run only.\n"
)


def machine() -> str:
    """A one-line description of the machine."""
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"


def replace_section(title: str, section: str, doc: Path = DOC, header: str = HEADER) -> None:
    """Replace (or append) the `## title` section of doc (docs/benchmarks.md) with
    `section`, which starts with that heading."""
    doc.parent.mkdir(parents=True, exist_ok=True)
    text = doc.read_text() if doc.exists() else header
    section = section.strip() + "\n\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text + "\n" + section
    doc.write_text(re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n")
    print(f"updated {doc.name}")


def write_section(title: str, command: str, body: str, doc: Path = DOC) -> None:
    """Replace the `## title` section of doc with the command, date, machine and body."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    replace_section(
        title,
        f"## {title}\n\nCommand: `{command}` — run {stamp} on {machine()}.\n\n{body}",
        doc,
    )
