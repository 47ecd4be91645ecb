"""Did the original change since the newest capture? Cheap things first.

- a `304 Not Modified` to the conditional GET: unchanged;
- the body's sha256 equal to the capture's raw body's (`raw_response` artifact): unchanged;
- otherwise the canonical text of both bodies (`shared.content.canonical_text`, the same function
  on both, so a new ad or a rotated token in the markup is no change) decides.

A platform's post is compared by its text (title and text, whitespace collapsed): counts and
replies move all the time, its words do not unless someone edits it.
"""

from __future__ import annotations

import hashlib
import re

from shared.platforms.post import Post

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def post_digest(title: str | None, text: str | None) -> str:
    """sha256 of a post's words: its title and text, whitespace collapsed."""
    words = f"{_norm(title or '')}\n{_norm(text or '')}"
    return hashlib.sha256(words.encode("utf-8")).hexdigest()


def post_changed(post: Post, stored_digest: str | None) -> bool | None:
    """Whether a post's words differ from the stored post's (None: nothing stored to compare)."""
    if stored_digest is None:
        return None
    return post_digest(post.title, post.text) != stored_digest


def text_changed(
    old: bytes, new: bytes, url: str, content_type: str | None, max_bytes: int, max_tags: int
) -> bool:
    """Whether two raw bodies of a page say different things: their canonical texts differ
    (blank lines and runs of spaces aside)."""
    # imported here: the article extractors (trafilatura, readability, jusText, lxml: ~20 MB)
    # are loaded by the services that check originals only when a body changed, not at start
    from shared.content.canonical_text import canonical_text

    before = canonical_text(old, url, content_type, max_bytes=max_bytes, max_tags=max_tags)
    after = canonical_text(new, url, content_type, max_bytes=max_bytes, max_tags=max_tags)
    return _norm(before) != _norm(after)
