"""Benchmark of readable text and metadata (shared.content) on the third-party corpora.

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_extraction [--no-docs] [--sets a,b] [--limit N]

For every page of the sets (../shared/corpora: extraction/article-extraction-benchmark,
extraction/trafilatura-eval, readability/, metadata/metascraper, platforms/) it runs, in the
same process and run:

- ours: `shared.content.article.extract_article` on the page (the text the readable plugin
  indexes: the chosen article's plain text, or the whole page's text when no article
  is found) and `shared.content.metadata.extract_metadata`;
- trafilatura alone: `trafilatura.extract(html, include_comments=False)` (as the
  article-extraction benchmark runs it) and `trafilatura.extract_metadata`;
- readability-lxml alone: `Document(html).summary()` as text, and its `short_title()`.

Text is scored with each set's own measure (bench/extraction_scores.py): shingle F1 where the
set has a full gold text (article-extraction, readability), segment F1 where it has
with/without segments (trafilatura-eval, the Reddit thread page). Metadata is scored as
exact-match rates after the normalisation of bench/metadata_match.py. Skips cleanly when
../shared/corpora is absent. One parse per page and extractor; nothing is cached on disk.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import lxml.html
import trafilatura
from readability import Document

from bench.extraction_corpus import CORPORA, SETS, Doc
from bench.extraction_scores import (
    Scores,
    segment_counts,
    segment_scores,
    shingle_counts,
    shingle_scores,
)
from bench.metadata_match import author_matches, date_matches, title_matches
from bench.report import write_section
from shared.content.article import Source, extract_article, page_text
from shared.content.metadata import extract_metadata

TITLE = "Readable text and metadata extraction"
COMMAND = ".venv/bin/python -m bench.bench_extraction"
SYSTEMS = ("ours", "trafilatura", "readability-lxml")
MATCHERS: dict[str, Callable[[str, str | None], bool]] = {
    "title": title_matches,
    "author": author_matches,
    "date": date_matches,
}


@dataclass
class Result:
    """What each system produced for one page."""

    text: dict[str, str] = field(default_factory=dict)
    meta: dict[str, dict[str, str | None]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def _readability_lxml(html: str) -> tuple[str, str | None]:
    try:
        doc = Document(html)
        summary = doc.summary()
        return lxml.html.fromstring(summary).text_content(), doc.short_title()
    except Exception:  # readability-lxml raises bare Exceptions on odd pages
        return "", None


def run_doc(doc: Doc) -> Result:
    """All three systems on one page."""
    res = Result()
    start = time.process_time()
    article = extract_article([Source("raw", doc.html)])
    res.text["ours"] = article.text if article else page_text(doc.html)
    ours = extract_metadata(doc.html, doc.url or "http://fakehost/")
    res.meta["ours"] = {"title": ours.title, "author": ours.author, "date": ours.published_at}
    res.seconds["ours"] = time.process_time() - start

    start = time.process_time()
    res.text["trafilatura"] = trafilatura.extract(doc.html, include_comments=False) or ""
    tm = trafilatura.extract_metadata(doc.html, default_url=doc.url or None)
    res.meta["trafilatura"] = {
        "title": tm.title if tm else None,
        "author": tm.author if tm else None,
        "date": tm.date if tm else None,
    }
    res.seconds["trafilatura"] = time.process_time() - start

    start = time.process_time()
    text, title = _readability_lxml(doc.html)
    res.text["readability-lxml"] = text
    res.meta["readability-lxml"] = {"title": title, "author": None, "date": None}
    res.seconds["readability-lxml"] = time.process_time() - start
    return res


def text_scores(docs: list[Doc], results: list[Result], system: str) -> Scores | None:
    if any(d.gold_text is not None for d in docs):
        return shingle_scores(
            [
                shingle_counts(d.gold_text, r.text[system])
                for d, r in zip(docs, results, strict=True)
                if d.gold_text is not None
            ]
        )
    if any(d.with_ for d in docs):
        return segment_scores(
            [
                segment_counts(r.text[system], d.with_, d.without)
                for d, r in zip(docs, results, strict=True)
                if d.with_
            ]
        )
    return None


def meta_rates(docs: list[Doc], results: list[Result], system: str) -> dict[str, tuple[int, int]]:
    """field -> (matches, pages with a gold value)."""
    rates = {}
    for name, matches in MATCHERS.items():
        gold = [
            (getattr(d, name), r.meta[system].get(name)) for d, r in zip(docs, results, strict=True)
        ]
        gold = [(g, f) for g, f in gold if g]
        rates[name] = (sum(matches(g, f) for g, f in gold), len(gold))
    return rates


def _pct(hit: int, total: int) -> str:
    return f"{100 * hit / total:.1f} % ({hit}/{total})" if total else "–"


LIMITS = """What limits the misses (read from the per-page results): on the readability set the
gold is Readability.js's own output, which keeps figure captions, repeated paragraphs (its
synthetic pages repeat one "Lorem ipsum" paragraph; trafilatura drops adjacent repeats by
design, and real pages that repeat their article do so in a hidden copy) and short list items
that trafilatura's precision mode drops; the article-extraction gold leaves captions out, so
keeping them (trafilatura with images) trades one set for the other and is not done. Titles
missed: an `<h1>` that differs from every title tag, a truncated gold title, a mis-encoded
page and metascraper's "Name (@handle) • Instagram video" built from data the page's title
tags do not hold. Authors missed: site boilerplate in the gold (a date, "Last Updated"), job
titles or dates glued to the name, comment authors picked by trafilatura's author finder.
Dates missed: metascraper's modified-date choices, and htmldate's year-only guesses
(January 1st) on Telegram/TikTok pages whose post date is not in the HTML or only in app JSON.
The choice and cleanup rules in shared/content were developed on one half of each set's pages
and checked on the other half (split by CRC32 of the page name), not tuned on single pages."""


def targets(
    by_set: dict[str, tuple[list[Doc], list[Result]]], totals: dict[str, dict[str, list[int]]]
) -> list[str]:
    """The issue's targets, each with its figure and met / not met."""
    lines = ["Targets:", ""]
    if "article-extraction" in by_set:
        s = text_scores(*by_set["article-extraction"], "ours")
        if s:
            ok = "met" if s.f1 >= 0.95 else "NOT met"
            lines.append(f"- text F1 ≥ 0.95 on article-extraction: {s.f1:.3f} ({ok})")
    for name, (docs, results) in by_set.items():
        ours, alone = text_scores(docs, results, "ours"), text_scores(docs, results, "trafilatura")
        if ours and alone and len(docs) > 1:
            verdict = "met" if ours.f1 > alone.f1 + 0.0005 else "NOT met"
            lines.append(
                f"- above trafilatura alone on {name}: {ours.f1:.3f} vs {alone.f1:.3f} ({verdict})"
            )
    for field_name, goal in (("title", 95.0), ("author", 80.0), ("date", 80.0)):
        hit, total = totals.get("ours", {}).get(field_name, [0, 0])
        if total:
            rate = 100 * hit / total
            ok = "met" if rate >= goal else "NOT met"
            lines.append(f"- {field_name} ≥ {goal:.0f} %: {rate:.1f} % ({ok})")
    return [*lines, "", LIMITS]


def report(by_set: dict[str, tuple[list[Doc], list[Result]]]) -> str:
    lines = [
        "Text: F1 (precision / recall) with each set's own measure — shingle = the",
        "article-extraction benchmark's word-4-gram measure averaged over pages; segment =",
        "trafilatura's with/without segments counted over the set. Metadata: exact-match rate",
        "after normalisation (bench/metadata_match.py: case, accents, quotes, whitespace;",
        "titles may differ by site-name segments; author name sets; dates by calendar day).",
        "Gold values are each set's own: article text written by people (article-extraction),",
        "Readability.js output (readability), metascraper output (metascraper, platforms),",
        "trafilatura's annotations (trafilatura-eval).",
        "",
        "| set | pages | measure | ours | trafilatura alone | readability-lxml alone |",
        "|---|---|---|---|---|---|",
    ]
    for name, (docs, results) in by_set.items():
        cells = []
        measure = "shingle" if any(d.gold_text is not None for d in docs) else "segment"
        for system in SYSTEMS:
            s = text_scores(docs, results, system)
            cells.append(f"{s.f1:.3f} ({s.precision:.3f} / {s.recall:.3f})" if s else "–")
        if all(c == "–" for c in cells):
            continue
        label = name if name != "platforms-text" else "platforms (Reddit thread page)"
        lines.append(f"| {label} | {len(docs)} | {measure} | {' | '.join(cells)} |")
    lines += [
        "",
        "| set | field | ours | trafilatura alone | readability-lxml alone |",
        "|---|---|---|---|---|",
    ]
    totals: dict[str, dict[str, list[int]]] = {}
    for name, (docs, results) in by_set.items():
        rates = {system: meta_rates(docs, results, system) for system in SYSTEMS}
        for field_name in MATCHERS:
            if not rates["ours"][field_name][1]:
                continue
            cells = []
            for system in SYSTEMS:
                hit, total = rates[system][field_name]
                t = totals.setdefault(system, {}).setdefault(field_name, [0, 0])
                t[0] += hit
                t[1] += total
                cells.append(
                    _pct(hit, total)
                    if system != "readability-lxml" or field_name == "title"
                    else "–"
                )
            lines.append(f"| {name} | {field_name} | {' | '.join(cells)} |")
    for field_name in MATCHERS:
        cells = [
            _pct(*totals[s][field_name])
            if s != "readability-lxml" or field_name == "title"
            else "–"
            for s in SYSTEMS
        ]
        lines.append(f"| **all** | {field_name} | {' | '.join(cells)} |")
    lines += ["", *targets(by_set, totals)]
    seconds = {s: sum(r.seconds[s] for _, rs in by_set.values() for r in rs) for s in SYSTEMS}
    pages = sum(len(rs) for _, rs in by_set.values())
    lines += [
        "",
        "CPU time per page (text + metadata, one process): "
        + ", ".join(f"{s} {1000 * seconds[s] / max(pages, 1):.0f} ms" for s in SYSTEMS)
        + ". Ours removes hidden elements, then runs trafilatura twice, readability-lxml and"
        " jusText on each HTML version (here one: the corpora have no rendered DOM) plus"
        " trafilatura's metadata finders.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-docs", action="store_true", help="print only")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    ap.add_argument("--limit", type=int, default=0, help="pages per set (0 = all)")
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)  # the libraries log every odd page
    if not CORPORA.is_dir():
        print(f"skipped: {CORPORA} not present")
        return 0
    by_set: dict[str, tuple[list[Doc], list[Result]]] = {}
    for name in args.sets.split(","):
        docs = list(SETS[name]())
        if args.limit:
            docs = docs[: args.limit]
        results = [run_doc(d) for d in docs]
        # the platform set mixes metadata cases and one text case; split them for the tables
        for sub in sorted({d.set for d in docs}):
            pairs = [(d, r) for d, r in zip(docs, results, strict=True) if d.set == sub]
            by_set[sub] = ([d for d, _ in pairs], [r for _, r in pairs])
        print(f"{name}: {len(docs)} pages", flush=True)
    body = report(by_set)
    print(body)
    if not args.no_docs:
        write_section(TITLE, COMMAND, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
