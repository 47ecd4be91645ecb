"""Bluesky's answers in the documented shapes, for fictional accounts: the AppView's
getPostThread threads, DID documents naming the PDS (testkit.platform_server serves them)."""

from __future__ import annotations

from typing import Any

BSKY_DID = "did:plc:adaexample0000000000000a"
BSKY_OTHER = "did:plc:brooksample000000000000b"
BSKY_HANDLES = {"ada.example.social": BSKY_DID, "brook.example.social": BSKY_OTHER}
BSKY_RKEYS = {
    "normal": "3kaaaaaaaaa21",
    "four_images": "3kaaaaaaaaa22",
    "quote": "3kaaaaaaaaa23",
    "reply": "3kaaaaaaaaa24",
    "video": "3kaaaaaaaaa25",
    "tombstone": "3kaaaaaaaaa26",
    "not_found": "3kaaaaaaaaa27",
    "rate_limited": "3kaaaaaaaaa28",
    "html": "3kaaaaaaaaa29",
    "huge": "3kaaaaaaaaa2a",
    "malformed": "3kaaaaaaaaa2b",
    "login": "3kaaaaaaaaa2c",
    "server_error": "3kaaaaaaaaa2d",
}
BLOB_CIDS = [f"bafkreiexampleblob{n}" for n in range(1, 5)]


def _author(did: str) -> dict[str, Any]:
    handle = next(h for h, d in BSKY_HANDLES.items() if d == did)
    name = "Ada Example" if did == BSKY_DID else "Brook Sample"
    return {
        "did": did,
        "handle": handle,
        "displayName": name,
        "avatar": f"https://cdn.bsky.app/img/avatar/plain/{did}/x@jpeg",
    }


def _bsky_post(case: str, did: str, text: str, appview: str, **extra: Any) -> dict[str, Any]:
    rkey = BSKY_RKEYS.get(case, case)
    return {
        "uri": f"at://{did}/app.bsky.feed.post/{rkey}",
        "cid": f"bafyrei{rkey}",
        "author": _author(did),
        "record": {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": "2024-05-02T08:30:00.000Z",
            "langs": ["en"],
            **extra.pop("record_extra", {}),
        },
        "replyCount": 2,
        "repostCount": 1,
        "likeCount": 7,
        "quoteCount": 0,
        "indexedAt": "2024-05-02T08:30:01.000Z",
        "labels": [],
        **extra,
    }


def bsky_thread(case: str, appview: str) -> dict[str, Any]:
    """getPostThread's answer for a case."""
    post_type = "app.bsky.feed.defs#threadViewPost"
    if case == "tombstone":
        return {
            "thread": {
                "$type": "app.bsky.feed.defs#notFoundPost",
                "uri": f"at://{BSKY_DID}/app.bsky.feed.post/{BSKY_RKEYS[case]}",
                "notFound": True,
            }
        }
    if case == "normal":
        text = "Notes on keeping links alive example.org/notes/keep…"
        start = len(text.encode()) - len("example.org/notes/keep…".encode())
        facet = {
            "index": {"byteStart": start, "byteEnd": len(text.encode())},
            "features": [
                {
                    "$type": "app.bsky.richtext.facet#link",
                    "uri": "https://example.org/notes/keeping-links-alive",
                }
            ],
        }
        post = _bsky_post(case, BSKY_DID, text, appview, record_extra={"facets": [facet]})
    elif case == "four_images":
        images = [
            {
                "thumb": f"{appview}/cdn/thumb/{c}",
                "fullsize": f"{appview}/cdn/full/{c}",
                "alt": f"picture {n + 1}",
                "aspectRatio": {"width": 64, "height": 48},
            }
            for n, c in enumerate(BLOB_CIDS)
        ]
        stored = [
            {
                "alt": f"picture {n + 1}",
                "image": {
                    "$type": "blob",
                    "ref": {"$link": c},
                    "mimeType": "image/png",
                    "size": 100,
                },
            }
            for n, c in enumerate(BLOB_CIDS)
        ]
        post = _bsky_post(
            case,
            BSKY_DID,
            "Four from the walk",
            appview,
            embed={"$type": "app.bsky.embed.images#view", "images": images},
            record_extra={"embed": {"$type": "app.bsky.embed.images", "images": stored}},
        )
    elif case == "video":
        post = _bsky_post(
            case,
            BSKY_OTHER,
            "A clip",
            appview,
            embed={
                "$type": "app.bsky.embed.video#view",
                "cid": "bafkreivideo",
                "playlist": f"{appview}/video/playlist.m3u8",
                "thumbnail": f"{appview}/cdn/full/{BLOB_CIDS[0]}",
                "aspectRatio": {"width": 16, "height": 9},
            },
        )
    elif case == "quote":
        quoted = {
            "$type": "app.bsky.embed.record#viewRecord",
            "uri": f"at://{BSKY_DID}/app.bsky.feed.post/{BSKY_RKEYS['normal']}",
            "cid": "bafyreiquoted",
            "author": _author(BSKY_DID),
            "value": {
                "$type": "app.bsky.feed.post",
                "text": "Quoted words",
                "createdAt": "2024-05-01T08:00:00.000Z",
            },
            "likeCount": 3,
            "embeds": [],
        }
        post = _bsky_post(
            case,
            BSKY_OTHER,
            "Worth reading",
            appview,
            embed={"$type": "app.bsky.embed.record#view", "record": quoted},
        )
    elif case == "reply":
        root = {"$type": post_type, "post": _bsky_post("root", BSKY_DID, "The first word", appview)}
        parent = {
            "$type": post_type,
            "post": _bsky_post("parent", BSKY_OTHER, "A reply", appview),
            "parent": root,
        }
        child = {
            "$type": post_type,
            "post": _bsky_post("child", BSKY_OTHER, "A reply to the reply", appview),
            "replies": [],
        }
        gone = {
            "$type": "app.bsky.feed.defs#notFoundPost",
            "uri": f"at://{BSKY_OTHER}/app.bsky.feed.post/3kgone",
            "notFound": True,
        }
        post = _bsky_post(case, BSKY_DID, "A reply in a chain", appview)
        return {
            "thread": {"$type": post_type, "post": post, "parent": parent, "replies": [child, gone]}
        }
    else:
        raise KeyError(case)
    return {"thread": {"$type": post_type, "post": post, "replies": []}}


def did_document(did: str, pds: str) -> dict[str, Any]:
    """A DID document naming the PDS."""
    return {
        "@context": ["https://www.w3.org/ns/did/v1"],
        "id": did,
        "alsoKnownAs": [f"at://{next(h for h, d in BSKY_HANDLES.items() if d == did)}"],
        "service": [
            {"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": pds}
        ],
    }
