"""What each platform's yt-dlp extractor calls a post's parts is declared with its facts
(`Site.ytdlp`, `shared/platforms/facts/<platform>_site.py`) and used by yt-dlp's step
(`shared.platforms.ytdlp`): every platform whose chain has a yt-dlp step declares it, the
extractor that answered picks it, and one fictional info dictionary gives each platform's
author as its own extractor names it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shared.platforms import ytdlp
from shared.platforms.chains import PLATFORMS
from shared.platforms.registry import INFO_FIELDS, SITES
from shared.platforms.site import InfoFields
from tests.platforms.test_registry import REPO, docstrings, spelled_hosts

USES_YTDLP = sorted(n for n, p in PLATFORMS.items() if any(s == "yt-dlp" for s, _ in p.chain))

INFO: dict[str, Any] = {
    "id": "7300000000000000001",
    "title": "Morning by the river",
    "uploader": "up-name",
    "uploader_id": "@up-id",
    "uploader_url": "https://example.invalid/up-url",
    "channel": "ch-name",
    "channel_id": "ch-id",
    "channel_url": "https://example.invalid/ch-url",
    "creator": "creator-name",
    "formats": [{"format_id": "hd", "vcodec": "avc1", "url": "https://cdn.invalid/v.mp4"}],
}
"""Every author field set to a value naming it (fictional), no description: which field
each part of the author comes from, and whether the title is the post's, shows."""
GENERIC = ("up-name", None, "@up-id", "https://example.invalid/up-url", "Morning by the river")
EXPECTED: dict[str, tuple[str | None, ...]] = {
    # platform: (name, handle, id, url, title)
    "youtube": ("ch-name", "up-id", "ch-id", "https://example.invalid/ch-url", INFO["title"]),
    "tiktok": ("ch-name", "up-name", "@up-id", "https://example.invalid/up-url", None),
    "instagram": ("up-name", "ch-name", "@up-id", "https://www.instagram.com/ch-name/", None),
    "x": ("up-name", "@up-id", "ch-id", "https://example.invalid/up-url", None),
    "bluesky": (*GENERIC[:4], None),
    "telegram": (*GENERIC[:4], None),
    "facebook": GENERIC,
    "imgur": GENERIC,
    "streamable": GENERIC,
}


def test_the_check_finds_the_platforms_whose_chain_uses_ytdlp() -> None:
    assert {"youtube", "tiktok", "instagram", "facebook"} <= set(USES_YTDLP)
    assert "x" not in USES_YTDLP and "reddit" not in USES_YTDLP


@pytest.mark.parametrize("name", USES_YTDLP)
def test_every_platform_whose_chain_uses_ytdlp_declares_its_fields(name: str) -> None:
    fields = SITES[name].ytdlp
    assert fields is not None, f"{name}'s chain has a yt-dlp step: its facts declare Site.ytdlp"
    assert fields.extractor and fields.extractor == fields.extractor.lower()


def test_one_platform_per_extractor() -> None:
    extractors = [f.extractor for f in INFO_FIELDS]
    assert len(INFO_FIELDS) == sum(1 for s in SITES.values() if s.ytdlp)
    assert not [a for a in extractors for b in extractors if a != b and b.startswith(a)]


@pytest.mark.parametrize("name", [n for n, s in SITES.items() if s.ytdlp])
def test_the_extractor_that_answered_picks_its_platforms_fields(name: str) -> None:
    fields = SITES[name].ytdlp
    assert fields is not None
    for key in (fields.extractor.capitalize(), f"{fields.extractor.upper()}Embed"):
        assert ytdlp.fields_of({"extractor_key": key}) is fields
    assert ytdlp.fields_of({"extractor": f"{fields.extractor}:user"}) is fields


@pytest.mark.parametrize(("name", "expected"), EXPECTED.items())
def test_each_platforms_fields_give_its_author(name: str, expected: tuple[str | None, ...]) -> None:
    fields = SITES[name].ytdlp
    assert fields is not None
    post = ytdlp.post_from_info(INFO | {"extractor_key": fields.extractor}, name, "https://e/p")
    got = (post.author.name, post.author.handle, post.author.id, post.author.url, post.title)
    assert got == expected
    assert post.text == ("" if fields.titled else INFO["title"])


def test_another_extractor_goes_by_the_defaults() -> None:
    post = ytdlp.post_from_info(INFO | {"extractor_key": "Generic"}, "x", "https://e/p")
    got = (post.author.name, post.author.handle, post.author.id, post.author.url, post.title)
    assert got == GENERIC and post.platform == "x"


def test_a_new_platforms_fields_are_what_its_author_is_read_by() -> None:
    fields = InfoFields(
        "example",
        name=("creator",),
        handle=("channel",),
        id=("channel_id",),
        url=(),
        handle_prefix="c",
        profile="https://example.invalid/people/{}",
    )
    author = ytdlp.author_of(INFO, fields)
    assert (author.name, author.handle, author.id, author.url) == (
        "creator-name",
        "h-name",
        "ch-id",
        "https://example.invalid/people/ch-name",
    )


def test_comments_are_asked_of_the_platforms_that_declare_how() -> None:
    args = ytdlp.extraction_params(ytdlp.YtdlpOptions("t", comments=5), None)
    assert args["getcomments"] is True
    assert args["extractor_args"] == {
        "youtube": {"max_comments": ["5", "5", "0", "0"], "comment_sort": ["top"]}
    }
    assert "extractor_args" not in ytdlp.extraction_params(ytdlp.YtdlpOptions("t"), None)


def test_comments_are_kept_where_the_platform_says_how_they_are_linked() -> None:
    comments = [{"id": "c1", "text": "Nice", "author": "@brook", "parent": "root"}]
    info = INFO | {"comments": comments, "webpage_url": "https://e/watch?v=1"}
    youtube = ytdlp.post_from_info(info | {"extractor_key": "Youtube"}, "youtube", "https://e/p")
    assert [r.url for r in youtube.replies] == ["https://e/watch?v=1&lc=c1"]
    other = ytdlp.post_from_info(info | {"extractor_key": "Facebook"}, "facebook", "https://e/p")
    assert other.replies == []


def _platform_words(path: Path) -> list[str]:
    """The platform names and extractor keys a module spells outside its docstrings (a name
    too short to tell, X's, left to its extractor's: `twitter`)."""
    words = {w for w in (*SITES, *(f.extractor for f in INFO_FIELDS)) if len(w) > 2}
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    return [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        if any(w in node.value.lower() for w in words)
    ]


def test_the_check_finds_a_spelled_platform(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Docs name YouTube."""\nKEY = "TikTokVM"\n')
    assert _platform_words(sample) == ["sample.py:2: 'TikTokVM'"]


def test_ytdlp_spells_no_platform() -> None:
    module = REPO / "shared" / "platforms" / "ytdlp.py"
    assert not spelled_hosts(module) and not _platform_words(module)


def test_the_facts_stay_light() -> None:
    """The registry (the link rules read it) imports neither yt-dlp nor the chains."""
    heavy = ("yt_dlp", "shared.platforms.ytdlp", "shared.platforms.chain", "shared.fetching")
    code = (
        "import sys, shared.platforms.registry\n"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    env = os.environ | {"PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
