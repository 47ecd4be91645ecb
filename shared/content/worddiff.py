"""A word diff of two captures' canonical texts (added and removed words marked).

`difflib.SequenceMatcher` over every word of two 50,000-word texts takes ~0.35 s, and much
longer when they share little. So the diff runs in two levels, as `git diff --word-diff`
does on hunks: first over paragraphs (blocks separated by a blank line, the canonical text's
shape), where unchanged paragraphs match whole and a moved paragraph shows as removed in one
place and added in another; then over the words of each changed stretch only. A stretch too
large to diff word by word (its word counts multiply past `MAX_WORD_PAIRS`: a text with no
paragraph breaks) is first cut into content-defined chunks (a chunk ends after a word whose
CRC is 0 modulo `CHUNK_WORDS`, so an edit moves no boundary but its own) and diffed chunk by
chunk, the changed chunks word by word; what is still too large is shown removed then added.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

Op = Literal["equal", "insert", "delete"]
MAX_WORD_PAIRS = 4_000_000
"""A changed stretch whose word counts multiply past this is not diffed word by word."""
CHUNK_WORDS = 16
"""Average words of a content-defined chunk."""
_WORDS = re.compile(r"\S+\s*")
_PARAGRAPHS = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Piece:
    """A run of text the two versions share, or that only one of them has."""

    op: Op
    text: str


@dataclass(frozen=True)
class WordDiff:
    """The pieces in reading order, and the count of words added and removed."""

    pieces: list[Piece]
    added: int
    removed: int

    @property
    def changed(self) -> bool:
        """True when any word differs."""
        return bool(self.added or self.removed)


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPHS.split(text.strip()) if p.strip()]


def word_diff(old: str, new: str) -> WordDiff:
    """The word diff from old to new (whitespace inside a paragraph is not a change)."""
    a, b = _paragraphs(old), _paragraphs(new)
    out: _Builder = _Builder()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for p in a[i1:i2]:
                out.add("equal", p, paragraph=True)
        else:
            _words(out, a[i1:i2], b[j1:j2])
    return WordDiff(out.pieces, out.added, out.removed)


def _words(out: _Builder, old: list[str], new: list[str]) -> None:
    """Word-level diff of a changed stretch of paragraphs."""
    wa = [w for p in old for w in _split(p)]
    wb = [w for p in new for w in _split(p)]
    if len(wa) * len(wb) <= MAX_WORD_PAIRS:
        _word_level(out, wa, wb)
        return
    ca, cb = _chunks(wa), _chunks(wb)
    keys_a = ["".join(c).split() for c in ca]
    keys_b = ["".join(c).split() for c in cb]
    sm = SequenceMatcher(None, [" ".join(k) for k in keys_a], [" ".join(k) for k in keys_b],
                         autojunk=False)  # fmt: skip
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.add("equal", "".join(w for c in cb[j1:j2] for w in c))
            continue
        xa = [w for c in ca[i1:i2] for w in c]
        xb = [w for c in cb[j1:j2] for w in c]
        if len(xa) * len(xb) <= MAX_WORD_PAIRS:
            _word_level(out, xa, xb)
        else:
            out.add("delete", "".join(xa), words=len(xa))
            out.add("insert", "".join(xb), words=len(xb))


def _chunks(words: list[str]) -> list[list[str]]:
    """Content-defined chunks: a chunk ends after a word whose CRC-32 is 0 mod CHUNK_WORDS."""
    chunks: list[list[str]] = [[]]
    for w in words:
        chunks[-1].append(w)
        if zlib.crc32(w.rstrip().encode()) % CHUNK_WORDS == 0:
            chunks.append([])
    return [c for c in chunks if c]


def _word_level(out: _Builder, wa: list[str], wb: list[str]) -> None:
    """Word diff of two lists of words (each with its trailing space)."""
    ka = [w.rstrip() for w in wa]
    kb = [w.rstrip() for w in wb]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes():
        if tag == "equal":
            out.add("equal", "".join(wb[j1:j2]))
            continue
        if i2 > i1:
            out.add("delete", "".join(wa[i1:i2]), words=i2 - i1)
        if j2 > j1:
            out.add("insert", "".join(wb[j1:j2]), words=j2 - j1)


def _split(paragraph: str) -> list[str]:
    """Words with their trailing space; a paragraph's last word ends with a paragraph break."""
    words = _WORDS.findall(paragraph)
    if words:
        words[-1] = words[-1].rstrip() + "\n\n"
    return words


class _Builder:
    """Collects pieces, merging neighbours of the same op, and counts words."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self.added = 0
        self.removed = 0

    def add(self, op: Op, text: str, *, paragraph: bool = False, words: int | None = None) -> None:
        if paragraph:
            text += "\n\n"
        if not text:
            return
        n = len(text.split()) if words is None else words
        if op == "insert":
            self.added += n
        elif op == "delete":
            self.removed += n
        if self.pieces and self.pieces[-1].op == op:
            self.pieces[-1] = Piece(op, self.pieces[-1].text + text)
        else:
            self.pieces.append(Piece(op, text))
