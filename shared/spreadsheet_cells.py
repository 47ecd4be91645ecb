"""CSV cells a spreadsheet shows as text: a value starting like a formula (`=`, `+`, `-`,
`@`, a tab or a carriage return) gets a leading `'`, so a page title such as
`=HYPERLINK(...)` is never run when an owner opens an export (OWASP's "CSV injection")."""

from __future__ import annotations

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: object) -> str:
    """The value as a CSV cell no spreadsheet runs (None: empty)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text
