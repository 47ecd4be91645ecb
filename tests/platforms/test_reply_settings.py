"""A `<PLATFORM>_REPLIES` setting exists only where the platform's steps keep replies: a
setting that does nothing is a lie to the owner (it was declared by ten plugins and read by
two)."""

from __future__ import annotations

from pathlib import Path

from shared.hooks.config import read_schema

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
KEEP_REPLIES = {"bluesky": "BLUESKY_REPLIES", "reddit": "REDDIT_REPLIES"}
"""The plugins whose steps keep a post's replies, and the setting that caps them (Bluesky's
getPostThread: tests/platforms/test_bluesky.py caps them; Reddit's thread JSON:
tests/content/test_reddit.py). YouTube's comments are YOUTUBE_COMMENTS."""


def declared_reply_settings() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for config in sorted(PLUGINS.glob("*/config.json")):
        names = [k for k in read_schema(config)["properties"] if k.endswith("_REPLIES")]
        if names:
            found[config.parent.name] = names
    return found


def test_only_platforms_that_keep_replies_declare_a_replies_setting() -> None:
    assert declared_reply_settings() == {p: [name] for p, name in KEEP_REPLIES.items()}
