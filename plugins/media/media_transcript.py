"""Plain text from subtitle files (WebVTT, SRT), for the search index.

Automatic captions repeat each line as it scrolls; consecutive duplicates are dropped.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

_TIMING = re.compile(r"^\s*(\d+:)?\d+:\d+[.,]\d+\s*-->")
_TAG = re.compile(r"<[^>]*>")
_HEADER = re.compile(r"^(WEBVTT|NOTE|STYLE|REGION|Kind:|Language:)")


def subtitle_text(text: str) -> str:
    """The spoken text of a .vtt/.srt file, one cue line per line, duplicates removed."""
    lines: list[str] = []
    skip_block = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            skip_block = False
            continue
        if _HEADER.match(line):
            skip_block = line.startswith(("NOTE", "STYLE", "REGION"))
            continue
        if skip_block or _TIMING.match(line) or line.isdigit():
            continue
        clean = " ".join(html.unescape(_TAG.sub("", line)).split())
        if clean and (not lines or lines[-1] != clean):
            lines.append(clean)
    return "\n".join(lines)


def transcript(files: list[Path], max_chars: int = 400_000) -> str | None:
    """Text of the first readable subtitle file of `files` (in preference order)."""
    for path in files:
        if path.suffix.lower() not in (".vtt", ".srt") or not path.is_file():
            continue
        text = subtitle_text(path.read_text(encoding="utf-8", errors="replace"))
        if text:
            return text[:max_chars]
    return None
