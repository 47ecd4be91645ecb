"""Bluesky: the public AppView (`com.atproto.identity.resolveHandle`, then
`app.bsky.feed.getPostThread` with parents and replies), images from the author's blob
store (the PDS named in their DID document: `com.atproto.sync.getBlob`, the bytes as
uploaded), quote posts and embeds.

A post the AppView does not have answers `{"error": "NotFound"}` (HTTP 400) or a thread of
`#notFoundPost`: gone. A `#blockedPost` is unknown (blocks depend on the viewer).
Links in a post's text are shortened by the app ("example.com/long-pa..."); the full URLs
are in the record's facets (UTF-8 byte ranges), put back into the text here.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.facts import bluesky_site as facts
from shared.platforms.http import judge, parse_json
from shared.platforms.outcome import StepOutcome, gone, present, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia, count, iso_utc

PLATFORM = "bluesky"
BASES: tuple[str, ...] = ("BLUESKY_APPVIEW_URL", "BLUESKY_PLC_URL")
"""The settings naming its API base URLs."""
NOT_FOUND = "app.bsky.feed.defs#notFoundPost"
BLOCKED = "app.bsky.feed.defs#blockedPost"
STEP = "appview"


def recognise(url: str) -> PostRef | None:
    """A post on Bluesky (`/profile/<handle or did>/post/<rkey>`), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host != facts.POST_HOST:
        return None
    m = facts.POST_PATH.match(parts.path or "/")
    return PostRef(PLATFORM, m.group("rkey"), url, handle=m.group("actor")) if m else None


def expand_facets(text: str, facets: Any) -> str:
    """The text with each link facet's shortened text replaced by its full URL (facet
    ranges count UTF-8 bytes)."""
    raw = text.encode("utf-8")
    spans = []
    for facet in facets if isinstance(facets, list) else []:
        index = facet.get("index") if isinstance(facet, dict) else None
        links = [
            f.get("uri")
            for f in (facet.get("features") or [] if isinstance(facet, dict) else [])
            if isinstance(f, dict) and f.get("$type") == "app.bsky.richtext.facet#link"
        ]
        if not isinstance(index, dict) or not links or not isinstance(links[0], str):
            continue
        start, end = index.get("byteStart"), index.get("byteEnd")
        if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(raw):
            spans.append((start, end, links[0]))
    for start, end, uri in sorted(spans, reverse=True):
        raw = raw[:start] + uri.encode("utf-8") + raw[end:]
    return raw.decode("utf-8", errors="replace")


def web_url(handle: str | None, did: str | None, uri: str) -> str:
    """bsky.app's address of a post from its at:// URI."""
    rkey = uri.rsplit("/", 1)[-1]
    return f"https://bsky.app/profile/{handle or did or 'unknown'}/post/{rkey}"


class Blobs:
    """Where each author's blobs live: their PDS, from their DID document (plc directory
    for did:plc, the host's /.well-known/did.json for did:web); looked up once per DID."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.pds: dict[str, str | None] = {}

    async def endpoint(self, did: str) -> str | None:
        if did not in self.pds:
            self.pds[did] = await self._lookup(did)
        return self.pds[did]

    async def _lookup(self, did: str) -> str | None:
        if did.startswith("did:web:"):
            url = f"https://{did[8:]}/.well-known/did.json"
        elif did.startswith("did:plc:"):
            url = f"{self.ctx.settings.base('BLUESKY_PLC_URL')}/{quote(did, safe=':')}"
        else:
            return None
        answer = await self.ctx.client.get(url, {"Accept": "application/json"})
        data = parse_json("did", answer) if judge("did", answer) is None else None
        if not isinstance(data, dict):
            return None
        for service in data.get("service") or []:
            if isinstance(service, dict) and service.get("type") == "AtprotoPersonalDataServer":
                endpoint = service.get("serviceEndpoint")
                return str(endpoint).rstrip("/") if isinstance(endpoint, str) else None
        return None

    async def url(self, did: str | None, cid: str | None, fallback: str) -> str:
        """The blob's getBlob address on the author's PDS, else the AppView's copy."""
        if not did or not cid:
            return fallback
        pds = await self.endpoint(did)
        if pds is None:
            return fallback
        return f"{pds}/xrpc/com.atproto.sync.getBlob?{urlencode({'did': did, 'cid': cid})}"


def _cid(image: Any) -> str | None:
    ref = (image or {}).get("ref") if isinstance(image, dict) else None
    link = ref.get("$link") if isinstance(ref, dict) else None
    return link if isinstance(link, str) else None


async def _media(
    blobs: Blobs, did: str | None, url: str, view: Any, record_embed: Any
) -> list[PostMedia]:
    """The images and video of an embed view (and its record, for the blobs' CIDs)."""
    if not isinstance(view, dict):
        return []
    kind = str(view.get("$type") or "")
    record_embed = record_embed if isinstance(record_embed, dict) else {}
    if kind.startswith("app.bsky.embed.recordWithMedia"):
        return await _media(blobs, did, url, view.get("media"), record_embed.get("media"))
    if kind.startswith("app.bsky.embed.images"):
        shown = [i for i in view.get("images") or [] if isinstance(i, dict)]
        stored = [i for i in record_embed.get("images") or [] if isinstance(i, dict)]
        out = []
        for n, image in enumerate(shown):
            cid = _cid(stored[n].get("image")) if n < len(stored) else None
            ratio = image.get("aspectRatio") or {}
            out.append(
                PostMedia(
                    kind="image",
                    url=await blobs.url(did, cid, str(image.get("fullsize"))),
                    alt=image.get("alt") or None,
                    width=ratio.get("width"),
                    height=ratio.get("height"),
                )
            )
        return out
    if kind.startswith("app.bsky.embed.video"):
        ratio = view.get("aspectRatio") or {}
        return [
            PostMedia(
                kind="video",
                url=url,
                poster=view.get("thumbnail"),
                alt=view.get("alt") or None,
                width=ratio.get("width"),
                height=ratio.get("height"),
            )
        ]
    if kind.startswith("app.bsky.embed.external"):
        external = view.get("external") or {}
        if isinstance(external, dict) and external.get("thumb"):
            return [
                PostMedia(
                    kind="image", url=str(external["thumb"]), alt=external.get("title") or None
                )
            ]
    return []


def _external_text(view: Any) -> str:
    """The link card of an external embed, as a line under the text."""
    if not isinstance(view, dict):
        return ""
    if str(view.get("$type") or "").startswith("app.bsky.embed.recordWithMedia"):
        return _external_text(view.get("media"))
    external = (
        view.get("external")
        if str(view.get("$type") or "").startswith("app.bsky.embed.external")
        else None
    )
    if isinstance(external, dict) and external.get("uri"):
        title = external.get("title") or ""
        return f"\n\n{title} {external['uri']}".rstrip() if title else f"\n\n{external['uri']}"
    return ""


async def _quoted(blobs: Blobs, view: Any) -> Post | None:
    """The post a record embed quotes (or the reason it is not shown)."""
    if not isinstance(view, dict):
        return None
    kind = str(view.get("$type") or "")
    if kind.startswith("app.bsky.embed.recordWithMedia"):
        return await _quoted(blobs, view.get("record"))
    if not kind.startswith("app.bsky.embed.record"):
        return None
    record = view.get("record")
    if not isinstance(record, dict):
        return None
    rtype = str(record.get("$type") or "")
    uri = str(record.get("uri") or "")
    if rtype.endswith("#viewRecord"):
        return await from_view(
            blobs,
            {**record, "record": record.get("value"), "embed": (record.get("embeds") or [None])[0]},
        )
    if rtype.endswith(("#viewNotFound", "#viewBlocked", "#viewDetached")):
        why = {
            "#viewNotFound": "not found",
            "#viewBlocked": "blocked",
            "#viewDetached": "detached by its author",
        }[rtype[rtype.index("#") :]]
        return Post(
            platform=PLATFORM,
            post_id=uri.rsplit("/", 1)[-1] or "unknown",
            url=web_url(None, None, uri),
            unavailable=why,
            source=STEP,
        )
    return None


async def from_view(blobs: Blobs, view: dict[str, Any]) -> Post:
    """A post from a postView (or a quote's viewRecord, shaped like one)."""
    author = view.get("author") or {}
    record = view.get("record") or {}
    did, handle = author.get("did"), author.get("handle")
    uri = str(view.get("uri") or "")
    url = web_url(handle, did, uri)
    text = expand_facets(str(record.get("text") or ""), record.get("facets"))
    embed = view.get("embed")
    langs = record.get("langs")
    return Post(
        platform=PLATFORM,
        post_id=uri.rsplit("/", 1)[-1] or "unknown",
        url=url,
        author=Author(
            name=author.get("displayName") or None,
            handle=handle,
            id=did,
            url=f"https://bsky.app/profile/{handle or did}",
        ),
        text=(text + _external_text(embed)).strip(),
        created_at=iso_utc(record.get("createdAt") or view.get("indexedAt")),
        language=langs[0]
        if isinstance(langs, list) and langs and isinstance(langs[0], str)
        else None,
        media=await _media(blobs, did, url, embed, record.get("embed")),
        counts=Counts(
            likes=count(view.get("likeCount")),
            reposts=count(view.get("repostCount")),
            replies=count(view.get("replyCount")),
        ),
        quoted=await _quoted(blobs, embed),
        source=STEP,
    )


async def from_thread(blobs: Blobs, node: Any, depth: int, limit: list[int]) -> Post | None:
    """A thread node (threadViewPost, notFoundPost, blockedPost) as a post with its parent
    chain and up to `depth` levels of replies (`limit`: replies left to keep)."""
    if not isinstance(node, dict):
        return None
    kind = node.get("$type")
    if kind in (NOT_FOUND, BLOCKED):
        uri = str(node.get("uri") or "")
        return Post(
            platform=PLATFORM,
            post_id=uri.rsplit("/", 1)[-1] or "unknown",
            url=web_url(None, None, uri),
            unavailable="not found" if kind == NOT_FOUND else "blocked",
            source=STEP,
        )
    if not isinstance(node.get("post"), dict):
        return None
    post = await from_view(blobs, node["post"])
    if isinstance(node.get("parent"), dict):
        post.parent = await from_thread(blobs, node["parent"], 0, [0])
    if depth > 0:
        for reply in node.get("replies") or []:
            if limit[0] <= 0:
                break
            limit[0] -= 1
            inner = await from_thread(
                blobs,
                {**reply, "parent": None} if isinstance(reply, dict) else reply,
                depth - 1,
                limit,
            )
            if inner is not None:
                post.replies.append(inner)
    return post


def _error_outcome(url: str, status: int | None, data: Any) -> StepOutcome | None:
    """An XRPC error answer: NotFound is gone, others unknown."""
    if not isinstance(data, dict) or "error" not in data:
        return None
    error, message = str(data.get("error")), str(data.get("message") or "")
    if error == "NotFound" or "not found" in message.lower():
        return gone(STEP, url, status, "not_found", f"{error}: {message}")
    if error in ("AccountTakedown", "AccountDeactivated", "RepoTakendown", "RepoDeactivated"):
        return gone(
            STEP,
            url,
            status,
            "suspended" if "Takedown" in error or "Takendown" in error else "deleted",
            f"{error}: {message}",
        )
    reason = "rate_limited" if error == "RateLimitExceeded" or status == 429 else "http_4xx"
    return unknown(STEP, url, status, reason, f"{error}: {message}")


async def _xrpc(ctx: Context, method: str, query: dict[str, Any]) -> tuple[str, Any]:
    """(URL, JSON or the outcome that ends the step)."""
    url = f"{ctx.settings.base('BLUESKY_APPVIEW_URL')}/xrpc/{method}?{urlencode(query)}"
    answer = await ctx.client.get(url, {"Accept": "application/json"})
    if answer.error is None and answer.status == 400 and answer.body[:1] == b"{":
        data = parse_json(STEP, answer)
        return url, _error_outcome(url, 400, data) or unknown(
            STEP, url, 400, "http_4xx", answer.text[:300]
        )
    judged = judge(STEP, answer)
    if judged is not None:
        return url, judged
    data = parse_json(STEP, answer)
    return url, (_error_outcome(url, answer.status, data) or data)


async def appview(ctx: Context, ref: PostRef) -> StepOutcome:
    """resolveHandle, then getPostThread (parents and replies), then the images' blobs."""
    actor = ref.handle or ""
    if not actor.startswith("did:"):
        url, data = await _xrpc(ctx, "com.atproto.identity.resolveHandle", {"handle": actor})
        if isinstance(data, StepOutcome):
            if data.evidence.status == 400:  # an unknown handle: the account may have moved on
                return unknown(STEP, url, 400, "handle_unresolved", data.evidence.text)
            return data
        if not isinstance(data, dict) or not str(data.get("did", "")).startswith("did:"):
            return unknown(STEP, url, None, "bad_answer", "no DID in the answer")
        actor = str(data["did"])
    uri = f"at://{actor}/app.bsky.feed.post/{ref.post_id}"
    depth = max(0, ctx.settings.reply_depth)
    url, data = await _xrpc(
        ctx, "app.bsky.feed.getPostThread", {"uri": uri, "depth": depth, "parentHeight": 10}
    )
    if isinstance(data, StepOutcome):
        return data
    thread = data.get("thread") if isinstance(data, dict) else None
    if not isinstance(thread, dict):
        return unknown(STEP, url, 200, "bad_answer", "no thread in the answer")
    if thread.get("$type") == NOT_FOUND:
        return gone(STEP, url, 200, "not_found", "notFoundPost")
    if thread.get("$type") == BLOCKED:
        return unknown(STEP, url, 200, "blocked", "blockedPost")
    post = await from_thread(Blobs(ctx), thread, depth, [ctx.settings.replies])
    if post is None:
        return unknown(STEP, url, 200, "bad_answer", f"thread of type {thread.get('$type')}")
    return present(STEP, url, 200, post)


CHAIN: Chain = ((STEP, appview),)
