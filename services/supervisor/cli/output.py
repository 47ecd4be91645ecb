"""Printing for `dla`: Rich tables on a terminal, or JSON with `--json`.

Rich's markup is off: what `dla` prints holds titles, URLs and error messages from pages
and servers, and Rich would read `[...]` in them as style tags (dropping `[Errno 111]`,
failing on a title starting `[/x]`). Colour is asked for with `style=`."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

out = Console(markup=False)
err = Console(stderr=True, markup=False)
_MARK = re.compile(r"<mark>(.*?)</mark>", re.S)


def print_json(data: Any) -> None:
    """Plain JSON on stdout (for scripts)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A Rich table on stdout."""
    t = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*(v if isinstance(v, Text) else Text("" if v is None else str(v)) for v in row))
    out.print(t)


def short(text: Any, width: int = 70) -> str:
    """One line, at most `width` characters."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def highlighted(snippet: Any, width: int = 70) -> Text:
    """A search snippet as the API gives it (HTML-escaped text, matches in `<mark>`) as
    text with the matches in bold, one line, at most `width` characters."""
    line = " ".join(str(snippet or "").split())
    text, shown, at = Text(), 0, 0
    pieces: list[tuple[str, str]] = []
    for found in _MARK.finditer(line):
        pieces += [(line[at : found.start()], ""), (found.group(1), "bold reverse")]
        at = found.end()
    pieces.append((line[at:], ""))
    for raw, style in pieces:
        part = html.unescape(raw)
        room = width - shown
        if len(part) > room:
            text.append(part[: max(0, room - 1)] + "…", style)
            break
        text.append(part, style)
        shown += len(part)
    return text
