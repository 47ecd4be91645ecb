"""Mastodon, the platform on any host: which links are its (the URL's shape on a listed
instance), their canonical form, and its chain against the local stand-in of the status API
(the documented Status entity, testkit.mastodon_data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.hooks.config import load_plugin_config
from shared.links.canonical import CanonicalUrl, canonicalize
from shared.platforms import mastodon
from shared.platforms.chains import recognise
from shared.platforms.registry import SITES, link_domains
from testkit import mastodon_data as data
from testkit.platform_server import PlatformServer, run_platform

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "mastodon"
LISTED = ("mastodon.social", "fosstodon.org")


@pytest.mark.parametrize(
    ("url", "post_id", "handle"),
    [
        ("https://mastodon.social/@ada/113000000000000001", "113000000000000001", "ada"),
        ("https://mastodon.social/@ada/113000000000000001/", "113000000000000001", "ada"),
        (
            "https://fosstodon.org/users/ada_example/statuses/42",
            "42",
            "ada_example",
        ),
        (
            "https://mastodon.social/@brook@example.social/113000000000000009",
            "113000000000000009",
            "brook@example.social",
        ),
    ],
)
def test_a_status_url_on_a_listed_instance_is_recognised(
    url: str, post_id: str, handle: str
) -> None:
    ref = recognise(url, LISTED)
    assert ref is not None and (ref.platform, ref.post_id, ref.handle) == (
        "mastodon",
        post_id,
        handle,
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://mastodon.social/@ada",
        "https://mastodon.social/@ada/media",
        "https://mastodon.social/tags/python",
        "https://mastodon.social/users/ada/statuses/abc",
        "https://mastodon.social/about",
    ],
)
def test_other_pages_of_an_instance_are_no_status(url: str) -> None:
    assert recognise(url, LISTED) is None


def test_a_status_shape_on_an_unlisted_host_is_not_mastodon() -> None:
    url = "https://blog.example.org/@ada/113000000000000001"
    assert recognise(url, LISTED) is None
    assert recognise(url) is None
    assert mastodon.recognise(url) is not None  # the shape alone; the host is the registry's


def test_its_instances_come_from_its_setting() -> None:
    config = load_plugin_config(PLUGIN)
    url = data.status_url("normal")
    assert config.runs_for(url, {}), "mastodon.social is a default instance"
    assert not config.runs_for("https://social.example.net/@ada/1", {})
    listed = {"MASTODON_INSTANCES": "a.b, Social.Example.Net"}
    assert config.runs_for("https://social.example.net/@ada/1", listed)
    assert link_domains("mastodon", " a.b, ,C.d ") == ("a.b", "c.d")
    assert SITES["mastodon"].instances == "MASTODON_INSTANCES"
    assert SITES["mastodon"].deletable == (), "not in the default allowlist: see docs"


def test_its_canonical_form_is_the_link_as_posted() -> None:
    url = "http://Mastodon.Social/@ada/113000000000000001?utm_source=x#top"
    found = canonicalize(url)
    assert isinstance(found, CanonicalUrl)
    assert found.canonical == "http://mastodon.social/@ada/113000000000000001"


async def test_the_status_is_the_post(tmp_path: Path) -> None:
    with PlatformServer() as server:
        result = await run_platform(server, data.status_url("two_images"), tmp_path)
    post = result.post
    assert post is not None and post.source == "status-api"
    assert (post.platform, post.post_id) == ("mastodon", data.STATUS_IDS["two_images"])
    assert post.author.name == "Ada Example" and post.author.handle == "ada"
    assert post.created_at == "2024-05-01T12:30:00Z" and post.language == "en"
    assert "https://example.org/a/long/path" in post.text, "the link in full"
    assert post.text.endswith("Second paragraph.")
    assert (post.counts.likes, post.counts.reposts, post.counts.replies) == (7, 4, 0)
    assert [m.kind for m in post.media] == ["image", "image"]
    assert all(m.file and (tmp_path / m.file).is_file() for m in post.media)
    assert post.media[0].alt == "Picture 1 of a test" and post.media[0].width == 64


async def test_a_reply_keeps_the_status_it_answers() -> None:
    with PlatformServer() as server:
        result = await run_platform(server, data.status_url("reply"))
    post = result.post
    assert post is not None and post.parent is not None
    assert post.parent.post_id == data.STATUS_IDS["normal"]


async def test_a_video_keeps_its_poster() -> None:
    with PlatformServer() as server:
        result = await run_platform(server, data.status_url("video"))
    assert result.post is not None
    [video] = result.post.media
    assert video.kind == "video" and video.poster and video.duration_s == 3.5


@pytest.mark.parametrize(
    ("case", "verdict", "reason", "code"),
    [
        ("not_found", "gone", "not_found", "E_MASTODON_NOT_FOUND"),
        ("rate_limited", "unknown", "rate_limited", "E_MASTODON_RATE_LIMITED"),
        ("server_error", "unknown", "http_5xx", "E_MASTODON_HTTP_5XX"),
        ("html", "unknown", "bad_answer", "E_MASTODON_BAD_ANSWER"),
        ("malformed", "unknown", "bad_answer", "E_MASTODON_BAD_ANSWER"),
    ],
)
async def test_each_failure_has_its_outcome(
    case: str, verdict: str, reason: str, code: str
) -> None:
    with PlatformServer() as server:
        result = await run_platform(server, data.status_url(case))
    [step] = result.steps
    assert (step.verdict, step.evidence.reason) == (verdict, reason), step
    assert result.error_code("MASTODON") == code
