"""What an error message shows of something a person gave (a setting's value, a form's field):
its repr, shortened, so a 5,000-character entry does not come back whole."""

from __future__ import annotations

import reprlib

_SHOWN = reprlib.Repr()
_SHOWN.maxstring = 100


def shown(value: object) -> str:
    """`value`'s repr (a string's, or the text of anything else), at most about 100
    characters: its start and end kept, the middle left out."""
    return _SHOWN.repr(value if isinstance(value, str) else str(value))
