"""Printing for `dla`: Rich tables on a terminal, or JSON with `--json`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

out = Console()
err = Console(stderr=True)


def print_json(data: Any) -> None:
    """Plain JSON on stdout (for scripts)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A Rich table on stdout."""
    t = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*("" if v is None else str(v) for v in row))
    out.print(t)


def short(text: Any, width: int = 70) -> str:
    """One line, at most `width` characters."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"
