"""One local server standing in for every platform API and page the platform steps call,
answering testkit.platform_data's cases (127.0.0.x only, a free port, stopped by whoever
started it).

Paths (each platform's base setting points at its prefix, `PlatformServer.bases()`):
`/x/tweet-result?id=`, `/fx/<handle>/status/<id>`, `/bsky/xrpc/<method>`, `/plc/<did>`,
`/pds/xrpc/com.atproto.sync.getBlob`, `/tiktok/@<handle>/<kind>/<id>`, `/tiktok/oembed`,
`/ig/p/<code>/embed/captioned/`, `/fb/plugins/post.php`, `/tg/<channel>/<id>`,
`/imgur/oembed.json`, `/streamable/oembed.json`, `/reddit/...`,
`/mastodon/api/v1/statuses/<id>`, `/media/<name>.png`.

The error cases answer alike on every endpoint: `not_found` 404, `rate_limited` 429,
`server_error` 503, `login` a redirect to `/accounts/login/`, `html` an HTML page where JSON
was expected, `huge` 50 MB of JSON, `malformed` cut JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shared.fetching.exchange import FetchLimits
from shared.hooks.records import ArchiveResultRecord, HookRecord, PostRecord, parse_record
from shared.hooks.snapshot_runner import SnapshotSpec, run_snapshot
from shared.platforms.chain import Context, Settings, run_chain, store_media
from shared.platforms.chains import PLATFORMS, recognise
from shared.platforms.http import Client
from shared.platforms.outcome import ChainResult
from testkit import bluesky_data as bsky
from testkit import mastodon_data as mastodon
from testkit import platform_data as data
from testkit import platform_pages as pages
from testkit.browser import Collect, retried_as_the_table_says
from testkit.httpserver import FixtureServer, Reply

JSON = {"Content-Type": "application/json"}
HTML = {"Content-Type": "text/html; charset=utf-8"}
HUGE_BYTES = 50 * 1024 * 1024


@cache
def huge_json() -> bytes:
    """50 MB of valid JSON."""
    item = b'{"filler": "' + b"x" * 1000 + b'"},'
    count = HUGE_BYTES // len(item)
    return b'{"items": [' + item * count + b"{}]}"


def error_reply(case: str) -> Reply | None:
    """The reply of an error case, None for the others."""
    if case == "not_found":
        return Reply(
            b'{"errors":[{"code":34,"message":"Sorry, that page does not exist."}]}', 404, JSON
        )
    if case == "rate_limited":
        return Reply(
            b'{"errors":[{"message":"Rate limit exceeded","code":88}]}',
            429,
            {**JSON, "Retry-After": "60"},
        )
    if case == "server_error":
        return Reply(b"<html><body>Service Unavailable</body></html>", 503, HTML)
    if case == "login":
        return Reply(b"", 302, {"Location": "/accounts/login/?next=%2F"})
    if case == "html":
        return Reply(
            b"<!DOCTYPE html><html><head><title>Something</title></head><body><p>"
            + b"An ordinary page where JSON was expected. " * 40
            + b"</p></body></html>",
            200,
            HTML,
        )
    if case == "huge":
        return Reply(huge_json(), 200, JSON)
    if case == "malformed":
        return Reply(b'{"__typename": "Tweet", "id_str": "17900000000000', 200, JSON)
    return None


def _case_of(ids: Mapping[str, str], value: str) -> str | None:
    return next((case for case, v in ids.items() if v == value), None)


class Router(dict[str, Any]):
    """FixtureServer's routes: every path goes to `dispatch` (by pattern, not by name)."""

    def __init__(self, server: PlatformServer) -> None:
        super().__init__()
        self.server = server

    def get(self, key: str, default: Any = None) -> Callable[[BaseHTTPRequestHandler], Reply]:
        return self.server.dispatch


class PlatformServer(FixtureServer):
    """Every platform's fixture endpoints on one host."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self.routes = Router(self)
        self.hits: list[str] = []
        self.reddit: dict[str, bytes] = {}
        """Reddit thread JSON by permalink path + `.json` (tests fill it)."""

    def __enter__(self) -> PlatformServer:
        super().__enter__()
        return self

    def bases(self) -> dict[str, str]:
        """Every platform base setting pointed at this server."""
        b = self.base
        return {
            "X_SYNDICATION_URL": f"{b}/x",
            "FXTWITTER_API_URL": f"{b}/fx",
            "BLUESKY_APPVIEW_URL": f"{b}/bsky",
            "BLUESKY_PLC_URL": f"{b}/plc",
            "TIKTOK_WEB_URL": f"{b}/tiktok",
            "TIKTOK_OEMBED_URL": f"{b}/tiktok/oembed",
            "INSTAGRAM_EMBED_URL": f"{b}/ig",
            "FACEBOOK_EMBED_URL": f"{b}/fb",
            "TELEGRAM_EMBED_URL": f"{b}/tg",
            "IMGUR_OEMBED_URL": f"{b}/imgur/oembed.json",
            "STREAMABLE_OEMBED_URL": f"{b}/streamable/oembed.json",
            "REDDIT_JSON_BASE": f"{b}/reddit",
            "MASTODON_API_URL": f"{b}/mastodon",
        }

    def dispatch(self, handler: BaseHTTPRequestHandler) -> Reply:
        parts = urlsplit(handler.path)
        path, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.hits.append(handler.path)
        media = f"{self.base}"
        for pattern, answer in self._table():
            m = re.match(pattern, path)
            if m:
                return answer(m, query, media) or Reply(
                    b"no such case", 404, {"Content-Type": "text/plain"}
                )
        return Reply(b"not found", 404, {"Content-Type": "text/plain"})

    def _table(self) -> Iterator[tuple[str, Callable[..., Reply | None]]]:
        yield r"^/media/(?P<name>[\w.-]+)\.(png|jpg|mp4)$", self._media
        yield (
            r"^/accounts/login/?$",
            lambda m, q, media: Reply(pages.LOGIN_PAGE.encode(), 200, HTML),
        )
        yield r"^/x/tweet-result$", self._syndication
        yield r"^/fx/(?P<handle>\w+)/status/(?P<id>\d+)$", self._fxtwitter
        yield r"^/bsky/xrpc/(?P<method>[\w.]+)$", self._xrpc
        yield r"^/plc/(?P<did>did:plc:\w+)$", self._plc
        yield r"^/pds/xrpc/com\.atproto\.sync\.getBlob$", self._blob
        yield r"^/bsky/cdn/full/(?P<cid>\w+)$", self._blob_cdn
        yield (
            r"^/tiktok/oembed$",
            lambda m, q, media: Reply(
                json.dumps(pages.oembed("TikTok", media)).encode(), 200, JSON
            ),
        )
        yield r"^/tiktok/@[\w.]+/(video|photo)/(?P<id>\d+)$", self._tiktok
        yield r"^/ig/p/(?P<code>[\w-]+)/embed/captioned/$", self._instagram
        yield (
            r"^/fb/plugins/post\.php$",
            lambda m, q, media: Reply(pages.facebook_embed(media).encode(), 200, HTML),
        )
        yield r"^/tg/(?P<channel>\w+)/(?P<id>\d+)$", self._telegram
        yield r"^/(?P<p>imgur|streamable)/oembed\.json$", self._oembed
        yield r"^/reddit(?P<path>/r/.+)$", self._reddit
        yield r"^/mastodon/api/v1/statuses/(?P<id>\d+)$", self._mastodon

    def _media(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        name = m.group("name")
        if name == "missing":
            return Reply(b"gone", 404, {"Content-Type": "text/plain"})
        if name == "notimage":
            return Reply(pages.LOGIN_PAGE.encode(), 200, HTML)
        colour = data.COLOURS[sum(map(ord, name)) % len(data.COLOURS)]
        return Reply(data.png(64, 48, colour), 200, {"Content-Type": "image/png"})

    def _syndication(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        case = _case_of(data.X_IDS, q.get("id", ""))
        if case is None:
            return None
        return error_reply(case) or Reply(
            json.dumps(data.syndication(case, media)).encode(), 200, JSON
        )

    def _fxtwitter(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        case = _case_of(data.X_IDS, m.group("id"))
        if case is None:
            return None
        if case != "not_found" and (err := error_reply(case)) is not None:
            return err
        status, body = data.fxtwitter(case, media)
        return Reply(json.dumps(body).encode(), status, JSON)

    def _xrpc(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        method = m.group("method")
        if method == "com.atproto.identity.resolveHandle":
            did = bsky.BSKY_HANDLES.get(q.get("handle", ""))
            if did is None:
                return Reply(
                    b'{"error":"InvalidRequest","message":"Unable to resolve handle"}', 400, JSON
                )
            return Reply(json.dumps({"did": did}).encode(), 200, JSON)
        if method == "app.bsky.feed.getPostThread":
            rkey = q.get("uri", "").rsplit("/", 1)[-1]
            case = _case_of(bsky.BSKY_RKEYS, rkey)
            if case is None:
                return None
            if case == "not_found":
                body = {"error": "NotFound", "message": f"Post not found: {q.get('uri')}"}
                return Reply(json.dumps(body).encode(), 400, JSON)
            return error_reply(case) or Reply(
                json.dumps(bsky.bsky_thread(case, f"{self.base}/bsky")).encode(), 200, JSON
            )
        return None

    def _plc(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        return Reply(
            json.dumps(bsky.did_document(m.group("did"), f"{self.base}/pds")).encode(), 200, JSON
        )

    def _blob(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        cid = q.get("cid", "")
        n = bsky.BLOB_CIDS.index(cid) if cid in bsky.BLOB_CIDS else 0
        return Reply(data.png(64, 48, data.COLOURS[n]), 200, {"Content-Type": "image/png"})

    def _blob_cdn(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        return Reply(data.png(32, 24), 200, {"Content-Type": "image/png"})

    def _tiktok(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        case = _case_of(pages.TIKTOK_IDS, m.group("id"))
        if case is None:
            return None
        return error_reply(case) or Reply(pages.tiktok_page(case, media).encode(), 200, HTML)

    def _instagram(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        code = m.group("code")
        return error_reply(code) or Reply(pages.instagram_embed(code, media).encode(), 200, HTML)

    def _telegram(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        gone = m.group("id") == "404"
        return Reply(
            pages.telegram_widget(m.group("channel"), m.group("id"), media, gone).encode(),
            200,
            HTML,
        )

    def _oembed(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply:
        return Reply(json.dumps(pages.oembed(m.group("p"), media)).encode(), 200, JSON)

    def _mastodon(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        case = _case_of(mastodon.STATUS_IDS, m.group("id"))
        if case is None:
            return None
        if case == "not_found":
            return Reply(b'{"error":"Record not found"}', 404, JSON)
        return error_reply(case) or Reply(
            json.dumps(mastodon.status(case, media)).encode(), 200, JSON
        )

    def _reddit(self, m: re.Match[str], q: dict[str, str], media: str) -> Reply | None:
        answer = self.reddit.get(m.group("path"))
        return Reply(answer, 200, JSON) if answer is not None else None


async def run_platform(
    server: PlatformServer, url: str, media_dir: Path | None = None, **changes: Any
) -> ChainResult:
    """The chain of the link's platform against this server, in-process (media stored
    under `media_dir` when given). Its yt-dlp step is left out (it would ask the real
    platform): tests/platforms/test_ytdlp.py runs it against a local page."""
    ref = recognise(url, (urlsplit(mastodon.INSTANCE).hostname or "",))
    assert ref is not None, url
    steps = tuple(name for name, _ in PLATFORMS[ref.platform].chain if name != "yt-dlp")
    settings = Settings(
        user_agent="test", allow_private=True, bases=server.bases(), steps=steps, **changes
    )
    limits = FetchLimits(
        total_timeout=10,
        header_timeout=10,
        idle_timeout=5,
        connect_timeout=5,
        max_bytes=5 * 1024 * 1024,
    )
    with Client(limits, user_agent="test", allow_private=True) as client:
        result = await run_chain(Context(settings, client), ref, PLATFORMS[ref.platform].chain)
        if media_dir is not None and result.post is not None:
            await store_media(client, result.post, media_dir)
    return result


PLUGINS = Path(__file__).resolve().parents[1] / "plugins"


def run_hook(
    plugin: str, hook: str, url: str, cwd: Path, server: PlatformServer, **env: str
) -> tuple[int, list[HookRecord], str]:
    """A platform plugin's hook as a real subprocess in `cwd` (the snapshot's
    `<plugin>/` folder), its bases pointed at `server`, local targets allowed, its yt-dlp
    step left out (it would ask the real platform): (exit code, records, stderr)."""
    prefix = plugin.upper()
    steps = ",".join(n for n, _ in PLATFORMS[plugin].chain if n != "yt-dlp")
    full = {
        **os.environ,
        **server.bases(),
        "ALLOW_PRIVATE_TARGETS": "true",
        f"{prefix}_STEPS": steps,
        **env,
    }
    cwd.mkdir(parents=True, exist_ok=True)
    script = next((PLUGINS / plugin).glob(f"on_Snapshot__*_{hook}.py"))
    proc = subprocess.run(
        [sys.executable, str(script), f"--url={url}", "--snapshot-id=t"],
        cwd=cwd, env=full, capture_output=True, timeout=120,
    )  # fmt: skip
    records = [parse_record(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    return proc.returncode, records, proc.stderr.decode()


def check_post_kept(plugin: str, url: str, source: str, images: int, cwd: Path) -> None:
    """The plugin's API hook keeps the post: succeeded, one Post record from `source`,
    post.json with `images` images stored beside it, and `<plugin>.json` naming the step."""
    with PlatformServer() as server:
        code, records, _ = run_hook(plugin, plugin, url, cwd, server)
    final = [r for r in records if isinstance(r, ArchiveResultRecord)][-1]
    assert code == 0 and final.status == "succeeded", final
    assert [r.post.source for r in records if isinstance(r, PostRecord)] == [source]
    kept = json.loads((cwd / "post.json").read_text())
    files = [m["file"] for m in kept["media"] if m.get("file")]
    assert len(files) == images and all((cwd / f).is_file() for f in files)
    assert json.loads((cwd / f"{plugin}.json").read_text())["source"] == source


def check_failure(plugin: str, url: str, code: str, exit_code: int, cwd: Path) -> None:
    """The plugin's API hook, run through the runner in the snapshot folder `cwd`, fails with
    `code` and exits `exit_code` (1: a retried code), and the runner gives it a retry_at
    exactly when shared/hooks/error_codes.py retries `code`."""
    prefix = plugin.upper()
    steps = ",".join(n for n, _ in PLATFORMS[plugin].chain if n != "yt-dlp")
    seen = Collect()
    with PlatformServer() as server:
        env = {**os.environ, **server.bases(), "ALLOW_PRIVATE_TARGETS": "true",
               f"{prefix}_STEPS": steps}  # fmt: skip
        spec = SnapshotSpec(snapshot_id="t", url=url, out_dir=cwd, plugins_dirs=[PLUGINS],
                            env=env, only_hooks=[plugin])  # fmt: skip
        asyncio.run(run_snapshot(spec, seen, kill_grace=5))
    final = seen.final[plugin]  # the API hook (step 1) ends first
    assert (final.exit_code, final.status, final.error_code) == (exit_code, "failed", code), final
    assert retried_as_the_table_says(final), final
