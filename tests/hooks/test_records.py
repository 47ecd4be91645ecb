"""Hook records bound what a page may say: a Metadata record cuts overlong text and drops
overlong URLs, whichever hook printed it."""

from __future__ import annotations

import json

from shared.hooks.records import MAX_URL_CHARS, TEXT_LIMITS, MetadataRecord, parse_record


def test_overlong_text_is_cut_with_an_ellipsis_and_short_text_kept() -> None:
    line = json.dumps({"type": "Metadata", "title": "Very long title " * 300,
                       "author": "a" * 5000, "language": "en", "description": "short"})  # fmt: skip
    record = parse_record(line)
    assert isinstance(record, MetadataRecord)
    assert record.title is not None and len(record.title) == TEXT_LIMITS["title"]
    assert record.title.startswith("Very long title") and record.title.endswith("\u2026")
    assert record.author == "a" * (TEXT_LIMITS["author"] - 1) + "\u2026"
    assert (record.language, record.description) == ("en", "short")


def test_an_overlong_url_is_dropped_not_cut() -> None:
    long_url = "https://example.com/" + "x" * MAX_URL_CHARS
    record = MetadataRecord(title="t", image=long_url, favicon="https://example.com/f.ico")
    assert record.image is None and record.favicon == "https://example.com/f.ico"
