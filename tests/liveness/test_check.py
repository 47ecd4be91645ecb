"""One liveness check against a local site whose pages change, disappear (404, 410), answer
429 or 503, show a captcha or a login wall, or never answer; and against the platforms'
fixture APIs with each tombstone. Three answers, never two."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from shared.liveness.check import CheckEnv, Checker
from shared.liveness.check_evidence import describe
from shared.liveness.compare import post_digest
from shared.messages import LivenessCheck, LivenessResult
from shared.platforms.reddit_thread import on_host
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from testkit import bluesky_data as bsky
from testkit import mastodon_data as mastodon
from testkit import platform_data as data
from testkit.httpserver import FixtureServer, Reply, Serve
from testkit.platform_pages import TIKTOK_IDS
from testkit.platform_server import PlatformServer
from testkit.rawserver import RawServer, silent

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
HTML = {"Content-Type": "text/html; charset=utf-8"}
ARTICLE = (
    "<html><head><title>Owls</title>{extra}</head><body><nav>Home · About</nav><article>"
    "<h1>Barn owls</h1>{body}</article><footer>© 2026</footer></body></html>"
)
TEXT = "".join(
    f"<p>Barn owls hunt at dusk over open fields, paragraph {n}, listening for voles.</p>"
    for n in range(12)
)


def page(body: str = TEXT, extra: str = "") -> bytes:
    return ARTICLE.format(body=body, extra=extra).encode()


def checker(store: ObjectStore | None = None, /, **env: str) -> Checker:
    base = {"ALLOW_PRIVATE_TARGETS": "true", "FETCH_TIMEOUT": "5", "FETCH_HEADER_TIMEOUT": "3"}
    return Checker(CheckEnv(PLUGINS, base | env, "test:1"), store)


def job(url: str, **fields: Any) -> LivenessCheck:
    deadline = datetime.now(UTC) + timedelta(minutes=15)
    return LivenessCheck(link_id=1, seq=1, url=url, deadline=deadline, **fields)


def said(r: LivenessResult) -> tuple[Any, ...]:
    return (r.answer, r.tombstone, r.status, r.reason)


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    """One page per behaviour, on 127.0.0.2."""
    return serve(
        {
            "/ok": Reply(page(), 200, HTML),
            "/missing": Reply(b"not here", 404, {"Content-Type": "text/plain"}),
            "/removed": Reply(b"gone for good", 410, {"Content-Type": "text/plain"}),
            "/busy": Reply(b"slow down", 429, {"Content-Type": "text/plain", "Retry-After": "60"}),
            "/down": Reply(b"<html><body>Service Unavailable</body></html>", 503, HTML),
            "/captcha": Reply(
                b"<html><head><title>Just a moment...</title></head><body>Checking your"
                b" browser before accessing the site.</body></html>",
                200,
                HTML,
            ),
            "/walled": Reply(b"", 302, {"Location": "/accounts/login/?next=/walled"}),
            "/accounts/login/": Reply(
                b'<html><body><form><input name="u"><input type="password" name="p">'
                b"<button>Log in</button></form></body></html>",
                200,
                HTML,
            ),
        },
        host="127.0.0.2",
    )


@pytest.mark.parametrize(
    ("path", "answer"),
    [
        ("/ok", ("present", False, 200, "ok")),
        ("/missing", ("gone", False, 404, "not_found")),
        ("/removed", ("gone", False, 410, "not_found")),
        ("/busy", ("unknown", False, 429, "rate_limited")),
        ("/down", ("unknown", False, 503, "http_5xx")),
        ("/captcha", ("unknown", False, 200, "blocked")),
        ("/walled", ("unknown", False, 200, "login_wall")),
    ],
)
async def test_a_page_answers_present_gone_or_unknown(
    site: FixtureServer, path: str, answer: tuple[Any, ...]
) -> None:
    result = await checker().check(job(site.base + path))
    assert said(result) == answer
    assert result.via == "http" and result.link_id == 1 and result.seq == 1
    assert result.changed is None, "no capture to compare with"


async def test_a_host_that_never_answers_or_does_not_exist_is_unknown() -> None:
    with RawServer("127.0.0.3") as raw:
        raw.routes["/"] = silent
        result = await checker(FETCH_TIMEOUT="2", FETCH_HEADER_TIMEOUT="1").check(
            job(raw.base + "/")
        )
    assert (result.answer, result.reason) == ("unknown", "timeout")
    result = await checker().check(job("http://no-such-host.invalid/page"))
    assert result.answer == "unknown" and result.reason in ("no_host", "dns")
    said = describe(result.answer, result.reason, None, "", tombstone=False)
    assert said in ("the site's name does not exist", "name lookup failed")


async def test_private_addresses_are_refused_in_production(site: FixtureServer) -> None:
    result = await checker(ALLOW_PRIVATE_TARGETS="false").check(job(site.base + "/missing"))
    assert (result.answer, result.reason) == ("unknown", "refused"), "never gone without asking"


async def test_a_body_equal_to_the_captures_is_unchanged_without_reading_it(
    site: FixtureServer,
) -> None:
    digest = hashlib.sha256(page()).hexdigest()
    unread = "archives/1/none/fetch/body.html"  # no store: reading it would fail
    result = await checker().check(job(site.base + "/ok", raw_sha256=digest, raw_key=unread))
    assert (result.answer, result.changed) == ("present", False)


# -- against the newest capture's files in a real S3 --------------------------------------


@pytest.fixture
async def store(s3_env: dict[str, str]) -> AsyncIterator[ObjectStore]:
    settings = CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})
    async with ObjectStore(settings) as s:
        await s.ensure_bucket()
        yield s


async def captured(store: ObjectStore, name: str, body: bytes, **headers: str) -> dict[str, Any]:
    """A capture's raw body and headers in S3: the check job's fields pointing at them."""
    raw, meta = f"archives/9/{name}/fetch/body.html", f"archives/9/{name}/fetch/headers.json"
    await store.put_bytes(raw, body, "text/html")
    kept = {"status": 200, "headers": [["Content-Type", "text/html"], *headers.items()]}
    await store.put_bytes(meta, json.dumps(kept).encode(), "application/json")
    return {"snapshot_id": name, "raw_key": raw, "headers_key": meta,
            "raw_sha256": hashlib.sha256(body).hexdigest()}  # fmt: skip


async def test_a_conditional_get_answered_304_is_unchanged(
    serve: Serve, store: ObjectStore
) -> None:
    def conditional(handler: BaseHTTPRequestHandler) -> Reply:
        if handler.headers.get("If-None-Match") == '"v1"':
            return Reply(b"", 304, {"ETag": '"v1"'})
        return Reply(page(), 200, {**HTML, "ETag": '"v1"'})

    site = serve({"/etag": conditional}, host="127.0.0.2")
    fields = await captured(
        store, "etag", page(), ETag='"v1"', **{"Last-Modified": "Tue, 03 Mar 2026 10:00:00 GMT"}
    )
    result = await checker(store).check(job(site.base + "/etag", **fields))
    assert (result.answer, result.status, result.reason, result.changed) == (
        "present", 304, "not_modified", False
    )  # fmt: skip
    sent = site.requests[-1][1]
    assert sent.get("If-Modified-Since") == "Tue, 03 Mar 2026 10:00:00 GMT"


async def test_new_markup_saying_the_same_words_is_no_change(
    serve: Serve, store: ObjectStore
) -> None:
    site = serve({"/p": Reply(page(extra='<script>var t="tok-2";</script>'), 200, HTML)},
                 host="127.0.0.2")  # fmt: skip
    fields = await captured(store, "same", page(extra='<script>var t="tok-1";</script>'))
    result = await checker(store).check(job(site.base + "/p", **fields))
    assert (result.answer, result.changed) == ("present", False)


async def test_an_edited_text_is_a_change(serve: Serve, store: ObjectStore) -> None:
    edited = TEXT.replace("listening for voles", "listening for mice", 1)
    site = serve({"/p": Reply(page(edited), 200, HTML)}, host="127.0.0.2")
    fields = await captured(store, "edited", page())
    result = await checker(store).check(job(site.base + "/p", **fields))
    assert (result.answer, result.changed) == ("present", True)


async def test_a_capture_s3_cannot_give_leaves_the_change_unknown(
    serve: Serve, store: ObjectStore
) -> None:
    site = serve({"/p": Reply(page("<p>other words</p>"), 200, HTML)}, host="127.0.0.2")
    fields = await captured(store, "lost", page())
    fields["raw_key"] = "archives/9/lost/fetch/no-such-object"
    result = await checker(store).check(job(site.base + "/p", **fields))
    assert (result.answer, result.changed) == ("present", None)
    assert "unreadable" in result.words


# -- platforms: the API steps of each chain, never the browser ----------------------------


@pytest.fixture(scope="module")
def platforms() -> Iterator[PlatformServer]:
    with PlatformServer() as server:
        yield server


def platform_checker(server: PlatformServer) -> Checker:
    steps = {"TIKTOK_STEPS": "webpage,oembed", "TELEGRAM_STEPS": "embed"}
    return checker(None, **server.bases(), **steps)


X = "https://x.com/ada_example/status/{}"
BSKY = "https://bsky.app/profile/ada.example.social/post/{}"
TIKTOK = "https://www.tiktok.com/@ada.example/video/{}"


@pytest.mark.parametrize(
    ("url", "answer", "tombstone", "via"),
    [
        (X.format(data.X_IDS["normal"]), "present", False, "x:syndication"),
        (X.format(data.X_IDS["tombstone"]), "gone", True, "x:syndication"),
        (X.format(data.X_IDS["protected"]), "gone", True, "x:syndication"),
        (X.format(data.X_IDS["not_found"]), "gone", False, "x:syndication"),
        (X.format(data.X_IDS["rate_limited"]), "unknown", False, "x:syndication"),
        (X.format(data.X_IDS["login"]), "unknown", False, "x:syndication"),
        (X.format(data.X_IDS["server_error"]), "unknown", False, "x:syndication"),
        (BSKY.format(bsky.BSKY_RKEYS["tombstone"]), "gone", True, "bluesky:thread"),
        (BSKY.format(bsky.BSKY_RKEYS["not_found"]), "gone", True, "bluesky:thread"),
        (BSKY.format(bsky.BSKY_RKEYS["rate_limited"]), "unknown", False, "bluesky:thread"),
        (
            f"https://www.tiktok.com/@ada.example/video/{TIKTOK_IDS['private']}",
            "gone",
            True,
            "tiktok:webpage",
        ),
        ("https://t.me/examplechannel/404", "gone", True, "telegram:embed"),
        (mastodon.status_url("normal"), "present", False, "mastodon:status-api"),
        (mastodon.status_url("not_found"), "gone", False, "mastodon:status-api"),
        (mastodon.status_url("rate_limited"), "unknown", False, "mastodon:status-api"),
        (mastodon.status_url("server_error"), "unknown", False, "mastodon:status-api"),
    ],
)
async def test_a_platform_post_answers_from_its_api(
    platforms: PlatformServer, url: str, answer: str, tombstone: bool, via: str
) -> None:
    result = await platform_checker(platforms).check(job(url))
    assert (result.answer, result.tombstone) == (answer, tombstone), result
    assert result.via.split(":")[0] == via.split(":")[0]
    if answer == "gone" and tombstone:
        assert result.words, "the platform's own words are kept"


async def test_a_mastodon_link_off_the_listed_instances_is_checked_as_a_page(
    platforms: PlatformServer,
) -> None:
    """A status-shaped URL on a host MASTODON_INSTANCES does not list is no Mastodon post:
    its page is asked, never an API on a host that may not be an instance."""
    url = f"{platforms.base}/@ada/{mastodon.STATUS_IDS['normal']}"
    result = await platform_checker(platforms).check(job(url))
    assert result.via == "http", result
    listed = checker(None, **platforms.bases(), MASTODON_INSTANCES="127.0.0.1")
    assert (await listed.check(job(url))).via.startswith("mastodon:")


async def test_a_post_whose_words_changed_is_a_change(platforms: PlatformServer) -> None:
    url = X.format(data.X_IDS["normal"])
    first = await platform_checker(platforms).check(job(url, post_sha256="0" * 64))
    assert (first.answer, first.changed) == ("present", True)
    from shared.platforms.chains import recognise
    from testkit.platform_server import run_platform

    found = await run_platform(platforms, url)
    assert found.post is not None and recognise(url) is not None
    same = post_digest(found.post.title, found.post.text)
    second = await platform_checker(platforms).check(job(url, post_sha256=same))
    assert (second.answer, second.changed) == ("present", False)


def reddit_thread(**post: Any) -> bytes:
    path = "/r/example/comments/abc123/a_title/"
    base = {"id": "abc123", "title": "A title", "author": "ada_example", "subreddit": "example",
            "permalink": path, "selftext": "Self text", "score": 3, "num_comments": 0,
            "created_utc": 1714550400} | post  # fmt: skip
    listing = [
        {"kind": "Listing", "data": {"children": [{"kind": "t3", "data": base}]}},
        {"kind": "Listing", "data": {"children": []}},
    ]
    return json.dumps(listing).encode()


async def test_a_post_its_moderators_removed_is_gone_by_the_platforms_words(
    platforms: PlatformServer,
) -> None:
    url = "https://old.reddit.com/r/example/comments/abc123/a_title/"
    key = "/" + on_host("http://h", url, json_suffix=True).split("/", 3)[3].split("?")[0]
    platforms.reddit[key] = reddit_thread(selftext="[removed]", removed_by_category="moderator")
    result = await platform_checker(platforms).check(job(url))
    assert (result.answer, result.tombstone, result.reason) == ("gone", True, "removed")
    assert "moderator" in result.words
    platforms.reddit[key] = reddit_thread()
    result = await platform_checker(platforms).check(job(url))
    assert (result.answer, result.via) == ("present", "reddit:thread-json")


async def test_an_edited_page_that_now_opts_out_is_not_captured_again(
    serve: Serve, store: ObjectStore
) -> None:
    edited = TEXT.replace("listening for voles", "listening for mice", 1)
    optout = {**HTML, "X-No-Archive": "yes"}
    site = serve({"/p": Reply(page(edited), 200, optout)}, host="127.0.0.2")
    fields = await captured(store, "optout", page())
    result = await checker(store).check(job(site.base + "/p", **fields))
    assert (result.answer, result.changed) == ("present", False)
    assert "asks not to be archived" in (result.words or "")
