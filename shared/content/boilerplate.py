"""jusText's paragraph classification, with its context revision in linear time.

``justext.justext`` classifies each paragraph on its own (good, bad, short, neargood), then
revises the short and near-good ones by their nearest good or bad neighbours. jusText 3.0
finds each neighbour by walking from the paragraph until it meets one, so a run of n short
paragraphs (a chat log, a thread of one-line comments, a table of short cells, or a hostile
page of 50 000 ``<p>x</p>``) costs n² steps: 10 000 short paragraphs took 11 s of CPU,
20 000 took 44 s. ``paragraphs`` runs jusText's own steps (its parser, preprocessor,
paragraph maker and context-free classifier) and then ``revise``, which gives exactly
jusText's classes (a test compares them on random sequences) from neighbour tables built in
one pass each way.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, Protocol

from justext.core import (
    DEFAULT_ENC_ERRORS,
    DEFAULT_ENCODING,
    MAX_HEADING_DISTANCE_DEFAULT,
    ParagraphMaker,
    classify_paragraphs,
    html_to_dom,
    preprocessor,
)
from justext.paragraph import Paragraph as JustextParagraph

GOOD_OR_BAD = ("good", "bad")


class Paragraph(Protocol):
    """What the revision reads and writes of a ``justext.paragraph.Paragraph``."""

    cf_class: str
    class_type: str
    heading: bool
    text: str


class _Settled(JustextParagraph):  # type: ignore[misc]
    """A finished jusText paragraph whose text is normalised once. jusText's ``text``
    property joins and normalises the text nodes on every read, and the classifier reads it
    several times a paragraph: two thirds of jusText's time on an ordinary article."""

    @cached_property
    def text(self) -> str:
        return str(JustextParagraph.text.fget(self))


def paragraphs(html: bytes, stoplist: frozenset[str]) -> list[Any]:
    """``justext.justext(html, stoplist)`` with its default settings, in linear time."""
    dom = preprocessor(html_to_dom(html, DEFAULT_ENCODING, None, DEFAULT_ENC_ERRORS))
    found = ParagraphMaker.make_paragraphs(dom)
    for p in found:  # complete now: nothing appends to their text nodes any more
        p.__class__ = _Settled
    classify_paragraphs(found, stoplist)
    revise(found)
    return list(found)


def _nearest(classes: Sequence[str], wanted: tuple[str, ...], step: int) -> list[str]:
    """For each index, the class of the nearest paragraph before it (step 1) or after it
    (step -1) whose class is in ``wanted``; 'bad' at the document's edge (jusText's rule)."""
    out = ["bad"] * len(classes)
    last = "bad"
    order = range(len(classes)) if step == 1 else range(len(classes) - 1, -1, -1)
    for i in order:
        out[i] = last
        if classes[i] in wanted:
            last = classes[i]
    return out


def _headings(
    paragraphs: Sequence[Paragraph], max_distance: int, ahead: Sequence[str], *, first: bool
) -> None:
    """jusText's heading rules: a short heading (first pass), or a heading revised to bad
    that was not bad on its own (second pass), becomes near-good (first) or good (second)
    when a paragraph whose class in ``ahead`` is good follows it with at most
    ``max_distance`` characters of text in between. jusText walks forward to find it; here
    the first good paragraph after each index and the text lengths' running sum answer it
    at once. (A pass only changes the heading it is at, and looks only after it, so the
    tables stay true during the pass.)"""
    n = len(paragraphs)
    good_at = [n] * (n + 1)  # the first good paragraph at or after i (n: none)
    for i in range(n - 1, -1, -1):
        good_at[i] = i if ahead[i] == "good" else good_at[i + 1]
    chars = [0] * (n + 1)  # characters of text before paragraph i
    for i, p in enumerate(paragraphs):
        chars[i + 1] = chars[i] + len(p.text)
    for i, p in enumerate(paragraphs):
        if not p.heading:
            continue
        if first and p.class_type != "short":
            continue
        if not first and (p.class_type != "bad" or p.cf_class == "bad"):
            continue
        g = good_at[i + 1]
        if g < n and chars[g] - chars[i + 1] <= max_distance:
            p.class_type = "neargood" if first else "good"


def revise(
    paragraphs: Sequence[Paragraph], max_heading_distance: int = MAX_HEADING_DISTANCE_DEFAULT
) -> None:
    """``justext.core.revise_paragraph_classification``, in linear time."""
    # jusText's first loop copies each paragraph's context-free class as it reaches it, so
    # a heading looks ahead at the classes the later paragraphs had *before* the revision
    # (empty on fresh paragraphs: the pass then changes nothing). Kept as it is, for the
    # same classes.
    initial = [p.class_type for p in paragraphs]
    for p in paragraphs:
        p.class_type = p.cf_class
    _headings(paragraphs, max_heading_distance, initial, first=True)

    # Short paragraphs: by their nearest good/bad neighbours (read before any is revised).
    classes = [p.class_type for p in paragraphs]
    prev_gb, next_gb = _nearest(classes, GOOD_OR_BAD, 1), _nearest(classes, GOOD_OR_BAD, -1)
    near = (*GOOD_OR_BAD, "neargood")
    prev_any, next_any = _nearest(classes, near, 1), _nearest(classes, near, -1)
    for i, c in enumerate(classes):
        if c != "short":
            continue
        before, after = prev_gb[i], next_gb[i]
        if before == "good" and after == "good":
            new = "good"
        elif before == "bad" and after == "bad":
            new = "bad"
        elif (before == "bad" and prev_any[i] == "neargood") or (
            after == "bad" and next_any[i] == "neargood"
        ):
            new = "good"
        else:
            new = "bad"
        paragraphs[i].class_type = new

    # Near-good paragraphs: in order, each seeing the ones before it already revised.
    classes = [p.class_type for p in paragraphs]
    next_gb = _nearest(classes, GOOD_OR_BAD, -1)
    last = "bad"
    for i, p in enumerate(paragraphs):
        if p.class_type == "neargood":
            p.class_type = "bad" if (last, next_gb[i]) == ("bad", "bad") else "good"
        if p.class_type in GOOD_OR_BAD:
            last = p.class_type

    _headings(paragraphs, max_heading_distance, [p.class_type for p in paragraphs], first=False)
