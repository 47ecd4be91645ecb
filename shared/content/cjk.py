"""Chinese, Japanese, Korean, Thai, Lao, Khmer and Burmese text in the full-text index: one
token a character.

SQLite's FTS5 `unicode61` tokenizer splits words at spaces and punctuation. Chinese,
Japanese, Thai, Lao, Khmer and Burmese put no space between words (Korean attaches
particles to them), so a whole run of such text became one token: 「日本語のニュース」 was
found only by exactly that, never by 「ニュース」, nor ข่าววันนี้ by ข่าว.

The writer stores text in `link_text_fts` (and `link_text_history`) with a zero-width space
(U+200B, a separator to the tokenizer, invisible when shown) between each such character and
the next non-space character (`segmented`), and the web's search turns each of its words the
same way into a phrase of characters (`"ニ ュ ー ス"`): they must follow each other, as in the
text. Snippets and texts read back from the index are shown without those marks
(`unsegmented`). Other scripts are left exactly as they were.

The published database's `link_text_fts` therefore holds the zero-width spaces; the
captures' `text.txt` files keep the text as the page had it.
"""

from __future__ import annotations

import re

CHARS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3005-\u3007"  # 々 〆 〇
    "\u3021-\u3029\u3038-\u303c"  # Hangzhou numerals, ideographic iteration marks
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff"  # Bopomofo, Hangul compat., ...
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul syllables and Jamo extensions
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uffdc"  # halfwidth Katakana and Hangul
    "\U00020000-\U0003134f"  # CJK extensions B-G
)
"""Characters of scripts written without spaces between words, each its own token."""
_CHAR = f"[{CHARS}]"
SEPARATOR = "\u200b"
"""ZERO WIDTH SPACE: unicode61 splits tokens at it, and it shows as nothing."""
_SPLIT = re.compile(f"(?<={_CHAR})(?=[^\\s{SEPARATOR}])|(?<=[^\\s{SEPARATOR}])(?={_CHAR})")
_ANY = re.compile(_CHAR)


def has_cjk(text: str) -> bool:
    """Whether the text holds any character `segmented` separates."""
    return _ANY.search(text) is not None


def segmented(text: str, separator: str = SEPARATOR) -> str:
    """The text with `separator` between each CJK character and a non-space character next
    to it (idempotent: segmenting segmented text changes nothing)."""
    return _SPLIT.sub(separator, text) if has_cjk(text) else text


def unsegmented(text: str) -> str:
    """The text without the zero-width spaces `segmented` put in (and any the page had)."""
    return text.replace(SEPARATOR, "")
