"""The extraction corpora in ../shared/corpora as uniform documents (read-only; never copied).

Each `Doc` has the page HTML, the URL the page was saved from, and whatever gold the set
has: a full article text (`gold_text`), `with`/`without` segments, and title/author/date.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lxml.html

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
READABILITY_URL = "http://fakehost/test/page.html"


@dataclass
class Doc:
    """One page of a set and its gold values (None where the set has none)."""

    set: str
    name: str
    url: str
    html: str
    gold_text: str | None = None
    with_: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    title: str | None = None
    author: str | None = None
    date: str | None = None


def _text(value: Any) -> str | None:
    """A gold value as text: lists (several authors) joined, empty as None."""
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value if v)
    return str(value) if value else None


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def article_benchmark(root: Path = CORPORA) -> Iterator[Doc]:
    base = root / "extraction" / "article-extraction-benchmark"
    gold = _json(base / "ground-truth.json")
    for path in sorted((base / "html").glob("*.html.gz")):
        key = path.name.split(".")[0]
        html = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        item = gold[key]
        yield Doc("article-extraction", key, item.get("url") or "", html, item["articleBody"])


def trafilatura_eval(root: Path = CORPORA) -> Iterator[Doc]:
    base = root / "extraction" / "trafilatura-eval"
    for url, item in _json(base / "evaldata.json").items():
        yield Doc(
            "trafilatura-eval",
            item["file"],
            url,
            _read(base / "html" / item["file"]),
            with_=item.get("with", []),
            without=item.get("without", []),
            title=_text(item.get("title")),
            author=_text(item.get("author")),
            date=_text(item.get("date")),
        )


def readability(root: Path = CORPORA) -> Iterator[Doc]:
    base = root / "readability"
    for case in _json(base / "index.json")["cases_shared"]:
        folder = base / case
        expected = lxml.html.fragment_fromstring(
            _read(folder / "expected.html"), create_parent="div"
        )
        meta = _json(folder / "expected-metadata.json")
        yield Doc(
            "readability",
            case,
            READABILITY_URL,
            _read(folder / "source.html"),
            gold_text=expected.text_content(),
            title=_text(meta.get("title")),
            author=_text(meta.get("byline")),
            date=_text(meta.get("publishedTime")),
        )


def metascraper(root: Path = CORPORA) -> Iterator[Doc]:
    base = root / "metadata" / "metascraper"
    for folder in sorted(p for p in base.iterdir() if (p / "expected.json").exists()):
        case = _json(folder / "expected.json")
        exp = case["expected"]
        yield Doc(
            "metascraper",
            folder.name,
            case["url"],
            _read(folder / case.get("input", "input.html")),
            title=_text(exp.get("title")),
            author=_text(exp.get("author")),
            date=_text(exp.get("date")),
        )


def platforms(root: Path = CORPORA) -> Iterator[Doc]:
    """Platform pages with recorded metadata, plus the Reddit thread with text segments."""
    base = root / "platforms"
    for folder in sorted(p for p in base.iterdir() if (p / "cases.json").exists()):
        for case in _json(folder / "cases.json").get("cases", []):
            exp = case.get("expected") or {}
            if not isinstance(exp, dict) or not exp:
                continue
            yield Doc(
                "platforms",
                f"{folder.name}/{case['fixture']}",
                case.get("url", ""),
                _read(folder / case["fixture"]),
                title=_text(exp.get("title")),
                author=_text(exp.get("author")),
                date=_text(exp.get("date")),
            )
    reddit = base / "reddit" / "html"
    entry = _json(reddit / "reddit.com.init.json")
    ev = entry["trafilatura_evaldata"]
    yield Doc(
        "platforms-text",
        "reddit/html/" + entry["file"],
        entry["url"],
        _read(reddit / entry["file"]),
        with_=ev.get("with", []),
        without=ev.get("without", []),
    )


SETS = {
    "article-extraction": article_benchmark,
    "trafilatura-eval": trafilatura_eval,
    "readability": readability,
    "metascraper": metascraper,
    "platforms": platforms,
}
