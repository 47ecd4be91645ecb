"""Loading the third-party corpora (../shared/corpora) and an independent link oracle.

The oracle re-derives the expected archive targets of a cooked post with Python's
``html.parser`` (a different parser from the product's selectolax/Lexbor) and the rules
of the issue, so comparing the two is not comparing the code with itself.
"""

from __future__ import annotations

import glob
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

CORPORA = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpora"
DISCOURSE = CORPORA / "discourse" / "criticalfallibilism"
URLS = CORPORA / "urls"
FORUM = "discuss.criticalfallibilism.com"


def need(path: Path) -> Path:
    """``path`` inside the corpora, or skip the test when the corpora are absent."""
    if not path.exists():
        pytest.skip(f"corpora not present: {path}")
    return path


def load_json(path: Path) -> Any:
    return json.loads(need(path).read_text(encoding="utf-8"))


def cooked_samples() -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = load_json(DISCOURSE / "cooked_samples.json")["samples"]
    return samples


def json_posts() -> dict[int, dict[str, Any]]:
    """Every distinct post of the captured Discourse JSON files, by post id."""
    need(DISCOURSE)
    posts: dict[int, dict[str, Any]] = {}
    for name in sorted(glob.glob(str(DISCOURSE / "*.json"))):
        if name.endswith(("cooked_samples.json", "endpoints.json")):
            continue
        data = json.loads(Path(name).read_text(encoding="utf-8"))
        for post in data.get("latest_posts") or data.get("post_stream", {}).get("posts") or []:
            posts[post["id"]] = post
    return posts


def post_url(post: dict[str, Any]) -> str:
    slug = post.get("topic_slug") or "x"
    return f"https://{FORUM}/t/{slug}/{post['topic_id']}/{post['post_number']}"


def rss_items() -> list[dict[str, str]]:
    """Items of the three captured RSS feeds: file, guid, link, description."""
    items = []
    for name in ("posts.rss", "t_2108.rss", "t_2144.rss"):
        root = ET.parse(need(DISCOURSE / name)).getroot()
        for it in root.iter("item"):
            items.append(
                {
                    "file": name,
                    "guid": it.findtext("guid") or "",
                    "link": it.findtext("link") or "",
                    "description": it.findtext("description") or "",
                }
            )
    return items


# --- the oracle ----------------------------------------------------------------------------

VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
NOT_TARGET_CLASSES = {"mention", "mention-group", "hashtag", "hashtag-cooked", "lightbox", "anchor"}


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str], dict[str, str]]] = []
        self.found: list[tuple[str, set[str], list[tuple[str, set[str], dict[str, str]]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        if tag == "a" and a.get("href"):
            self.found.append((a["href"], classes, list(self.stack)))
        if tag not in VOID:
            self.stack.append((tag, classes, a))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return


def oracle_targets(html: str, base: str) -> list[tuple[str, bool]]:
    """Expected (absolute url, in_quote) archive targets of a cooked post, deduplicated."""
    parser = _Anchors()
    parser.feed(html)
    parser.close()
    out: list[tuple[str, bool]] = []
    previews: set[int] = set()
    for href, classes, ancestors in parser.found:
        if classes & NOT_TARGET_CLASSES:
            continue
        if any("lightbox-wrapper" in c for _, c, _ in ancestors):
            continue
        in_quote = any(
            t == "blockquote" or (t == "aside" and "quote" in c) for t, c, _ in ancestors
        )
        box = next(
            (
                (i, attrs)
                for i, (t, c, attrs) in enumerate(ancestors)
                if t in ("aside", "div")
                and (
                    "onebox" in c
                    or "lazy-video-container" in c
                    or any(x.endswith("-onebox") for x in c)
                )
            ),
            None,
        )
        if box is not None:
            key = id(ancestors[box[0]][2])
            if key in previews:
                continue
            previews.add(key)
            href = box[1].get("data-onebox-src") or href
        url = urljoin(base, href.strip())
        if not url.startswith(("http://", "https://")):
            continue
        host = urlsplit(url).hostname or ""
        if host == urlsplit(base).hostname:
            continue
        if (url, in_quote) not in out:
            out.append((url, in_quote))
    return out
