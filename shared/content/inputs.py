"""What the post-processing hooks read: the other plugins' captures of the snapshot.

A hook's cwd is `out_dir/<plugin>/`; the captures sit beside it:
- `../dom/dom.html`: the DOM the browser rendered (dom plugin, step 5), UTF-8;
- `../navigate/navigate.json`: `final_url`, `status`, headers of the browser's navigation;
- `../fetch/body.html`: the raw body (fetch plugin, step 4), bytes as served, and
  `../fetch/headers.json`: `final_url`, `status`, `headers`;
- `../<platform>/page.html`: the page a platform plugin's chain kept (shared.platforms.kept:
  Reddit's old.reddit, or www, page); it replaces fetch's body as the raw HTML.
A source whose recorded HTTP status is an error (>= 400) is left out: an error page is never
described as the page (its title would be "503 Service Unavailable"); so is a wall
(shared.content.walls: the rendered page when the navigate hook found one, the raw body
when it reads as one): a login wall's words are never a link's reader view, search text or
title. At most `max_bytes` of
each file are read (the start of the page), and the text is cut before its `max_tags + 1`-th
`<`: a parse's memory and time grow with the elements, not the bytes (20 MB of `<p>x</p>`
is 2.5 million elements; parsed by three extractors that is gigabytes), so both are bounded
whatever the page. Real pages stay far below the default: the largest of the corpora's 283
pages has 19 252 `<`, a long Wikipedia article.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.content.walls import wall_in_html
from shared.platforms import kept

CHARSET_HEADER = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)
CHARSET_META = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([\w.:-]+)", re.I)
HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class PageInputs:
    """The snapshot's HTML versions (None when absent or an error page) and its final URL."""

    rendered: str | None
    raw: str | None
    final_url: str
    skipped: tuple[str, ...] = ()
    """Why a present source was left out, e.g. "raw: HTTP 503"."""
    cut: tuple[str, ...] = ()
    """Sources cut at the byte or tag limit, e.g. "rendered: 100000 tags"."""


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _header(headers: Any, name: str) -> str | None:
    if isinstance(headers, dict):
        for key, value in headers.items():
            if str(key).lower() == name:
                return str(value)
    return None


def decode_html(data: bytes, content_type: str | None = None) -> str:
    """Bytes of an HTML page as text: the header's charset, else a `<meta charset>`, else
    UTF-8, else Windows-1252 (what browsers assume); never raises."""
    header = CHARSET_HEADER.search(content_type or "")
    meta = CHARSET_META.search(data[:4096])
    names = [header.group(1) if header else None, meta.group(1).decode() if meta else None]
    for name in names:
        if name:
            try:
                return data.decode(name, errors="replace")
            except LookupError:
                continue
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _is_error(status: Any) -> bool:
    return isinstance(status, int) and status >= 400


DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""Bytes of each HTML file read when the caller does not say."""
DEFAULT_MAX_TAGS = 100_000
"""Tags (`<`) of each HTML text kept when the caller does not say."""


def cut_markup(html: str, max_tags: int) -> str:
    """`html` up to (not including) its `max_tags + 1`-th `<`; unchanged when it has fewer."""
    if html.count("<") <= max_tags:
        return html
    at = -1
    for _ in range(max_tags + 1):
        at = html.find("<", at + 1)
    return html[:at]


class _Reader:
    """Reads the HTML files, each capped, noting which were cut."""

    def __init__(self, max_bytes: int, max_tags: int) -> None:
        self.max_bytes, self.max_tags = max_bytes, max_tags
        self.cut: list[str] = []

    def __call__(self, name: str, path: Path, content_type: str | None = None) -> str:
        with path.open("rb") as f:
            data = f.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            data = data[: self.max_bytes]
            self.cut.append(f"{name}: {self.max_bytes} bytes")
        html = decode_html(data, content_type)
        kept = cut_markup(html, self.max_tags)
        if len(kept) < len(html):
            self.cut.append(f"{name}: {self.max_tags} tags")
        return kept


def read_inputs(
    out_dir: Path,
    url: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_tags: int = DEFAULT_MAX_TAGS,
) -> PageInputs:
    """The captures beside a hook's folder (`out_dir` is the snapshot folder, i.e. `..`),
    each HTML file read up to `max_bytes` and cut after `max_tags` tags."""
    read = _Reader(max_bytes, max_tags)
    skipped: list[str] = []
    nav = _json(out_dir / "navigate" / "navigate.json")
    fetched = _json(out_dir / "fetch" / "headers.json")
    rendered: str | None = None
    dom = out_dir / "dom" / "dom.html"
    wall = nav.get("wall")
    if dom.is_file():
        if _is_error(nav.get("status")):
            skipped.append(f"rendered: HTTP {nav['status']}")
        elif isinstance(wall, dict):
            skipped.append(f"rendered: {wall.get('reason') or 'wall'}")
        else:
            rendered = read("rendered", dom, "text/html; charset=utf-8")
    raw: str | None = None
    body = out_dir / "fetch" / "body.html"
    content_type = _header(fetched.get("headers"), "content-type")
    platform_page = kept.find(out_dir, kept.PAGE)
    if platform_page is not None:
        raw = read("raw", platform_page[1])
    elif body.is_file():
        if _is_error(fetched.get("status")):
            skipped.append(f"raw: HTTP {fetched['status']}")
        else:
            raw = read("raw", body, content_type)
            raw_wall = wall_in_html(str(fetched.get("final_url") or url), raw, url)
            if raw_wall is not None:
                skipped.append(f"raw: {raw_wall.reason}")
                raw = None
    final_url = str(nav.get("final_url") or fetched.get("final_url") or url)
    return PageInputs(rendered, raw, final_url, tuple(skipped), tuple(read.cut))
