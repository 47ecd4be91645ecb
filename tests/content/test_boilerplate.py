"""The linear jusText revision gives jusText's own classes, and stays linear."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from justext.core import revise_paragraph_classification

from shared.content.article import STOPLIST, _justext
from shared.content.boilerplate import paragraphs, revise

CLASSES = ("good", "bad", "short", "neargood")


@dataclass
class Para:
    cf_class: str
    heading: bool
    text: str
    class_type: str = ""


def _random_doc(rng: random.Random, n: int) -> list[Para]:
    weights = [rng.random() for _ in CLASSES]
    return [
        Para(
            rng.choices(CLASSES, weights)[0],
            rng.random() < 0.2,
            "x" * rng.choice((0, 0, 3, 40, 150, 300)),
            rng.choice(("", "", *CLASSES)),  # jusText's first heading pass reads these
        )
        for _ in range(n)
    ]


def test_same_classes_as_justext_on_random_documents() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        doc = _random_doc(rng, rng.randrange(0, 40))
        theirs = [Para(p.cf_class, p.heading, p.text, p.class_type) for p in doc]
        revise_paragraph_classification(theirs)
        revise(doc)
        assert [p.class_type for p in doc] == [p.class_type for p in theirs]


def test_same_paragraphs_as_justext_on_a_page() -> None:
    import justext

    html = (
        "<html><body><h1>Title</h1><p>short</p><p>"
        + "The quick brown fox jumps over the lazy dog because it is what it does. " * 5
        + "</p><ul><li>Home</li><li>About</li></ul><h2>More</h2><p>and</p><p>"
        + "There is another paragraph here with many of the common words in it. " * 4
        + "</p><footer>© 2026</footer></body></html>"
    ).encode()
    ours = paragraphs(html, STOPLIST)
    theirs = justext.justext(html, STOPLIST)
    assert [(p.text, p.class_type) for p in ours] == [(p.text, p.class_type) for p in theirs]


def test_many_short_paragraphs_are_not_quadratic() -> None:
    """50 000 one-word paragraphs: jusText 3.0 alone takes minutes (n² neighbour walks)."""
    html = "<html><body>" + "<p>x</p>" * 50_000 + "</body></html>"
    started = time.process_time()
    _justext(html)
    assert time.process_time() - started < 60  # a hang check; linear takes ~1 s
