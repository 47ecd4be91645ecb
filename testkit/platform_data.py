"""Platform answers in each platform's documented shape, for fictional accounts: X's
syndication `tweet-result` and fxtwitter, Bluesky's AppView (resolveHandle,
getPostThread, the PLC directory's DID documents), TikTok's page data and oEmbed,
Instagram's and Facebook's embed pages, Telegram's widget, Reddit's thread JSON.

Every case is named (`normal`, `four_images`, `video`, `quote`, `reply`, `tombstone`,
`protected`, `not_found`, `rate_limited`, `login`, `html`, `huge`, `malformed` ...);
`testkit.platform_server` serves them. Images are small PNGs made here.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

ADA = {
    "id_str": "1001",
    "name": "Ada Example",
    "screen_name": "ada_example",
    "profile_image_url_https": "https://pbs.twimg.com/profile_images/1/ada_normal.jpg",
}
BROOK = {"id_str": "1002", "name": "Brook Sample", "screen_name": "brook_sample"}
CAL = {"id_str": "1003", "name": "Cal Testwood", "screen_name": "caltest"}

X_IDS = {
    "normal": "1790000000000000001",
    "four_images": "1790000000000000002",
    "video": "1790000000000000003",
    "quote": "1790000000000000004",
    "reply": "1790000000000000005",
    "reply_parent": "1790000000000000006",
    "reply_root": "1790000000000000007",
    "tombstone": "1790000000000000008",
    "protected": "1790000000000000009",
    "not_found": "1790000000000000010",
    "rate_limited": "1790000000000000011",
    "login": "1790000000000000012",
    "html": "1790000000000000013",
    "huge": "1790000000000000014",
    "malformed": "1790000000000000015",
    "long": "1790000000000000016",
    "server_error": "1790000000000000017",
}
"""Case -> post id; the error cases answer the same on every endpoint."""
ERROR_CASES = ("not_found", "rate_limited", "login", "html", "huge", "malformed", "server_error")
LONG_TEXT = "A long post. " * 40


def png(width: int = 64, height: int = 48, rgb: tuple[int, int, int] = (40, 120, 200)) -> bytes:
    """A PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


COLOURS = [(200, 60, 60), (60, 160, 80), (60, 90, 200), (220, 170, 40), (140, 60, 180)]


def _photo(media: str, n: int, alt: str | None = None) -> dict[str, Any]:
    return {
        "display_url": f"pic.x.com/p{n}",
        "expanded_url": f"https://x.com/ada_example/status/1/photo/{n}",
        "ext_media_availability": {"status": "Available"},
        "indices": [100, 123],
        "media_url_https": f"{media}/media/photo{n}.png",
        "original_info": {"height": 48, "width": 64},
        "sizes": {"large": {"h": 48, "w": 64, "resize": "fit"}},
        "type": "photo",
        "url": f"https://t.co/pic{n}",
        **({"ext_alt_text": alt} if alt else {}),
    }


def _tweet(case: str, user: dict[str, Any], text: str, media: str, **extra: Any) -> dict[str, Any]:
    post_id = X_IDS[case]
    return {
        "__typename": "Tweet",
        "lang": "en",
        "favorite_count": 42,
        "possibly_sensitive": False,
        "created_at": "2024-05-01T12:00:00.000Z",
        "display_text_range": [0, len(text)],
        "entities": {"hashtags": [], "urls": [], "user_mentions": [], "symbols": []},
        "id_str": post_id,
        "text": text,
        "user": user,
        "edit_control": {
            "edit_tweet_ids": [post_id],
            "editable_until_msecs": "0",
            "is_edit_eligible": False,
            "edits_remaining": "5",
        },
        "conversation_count": 3,
        "news_action_type": "conversation",
        "isEdited": False,
        "isStaleEdit": False,
        **extra,
    }


def syndication(case: str, media: str) -> dict[str, Any]:
    """The syndication endpoint's answer for a case (`media`: base URL of the images)."""
    if case == "normal":
        text = "Reading about archives today https://t.co/abc123"
        return _tweet(
            case,
            ADA,
            text,
            media,
            entities={
                "hashtags": [],
                "user_mentions": [],
                "symbols": [],
                "urls": [
                    {
                        "url": "https://t.co/abc123",
                        "expanded_url": "https://example.org/archives/why",
                        "display_url": "example.org/archives/…",
                        "indices": [28, 51],
                    }
                ],
            },
        )
    if case == "four_images":
        photos = [_photo(media, n, alt=f"picture {n}") for n in range(1, 5)]
        text = "Four pictures of the harbour " + " ".join(p["url"] for p in photos)
        return _tweet(
            case,
            ADA,
            text,
            media,
            mediaDetails=photos,
            photos=[{"url": p["media_url_https"], "width": 64, "height": 48} for p in photos],
        )
    if case == "video":
        video = {
            **_photo(media, 5),
            "type": "video",
            "video_info": {
                "aspect_ratio": [16, 9],
                "duration_millis": 12500,
                "variants": [
                    {
                        "content_type": "video/mp4",
                        "bitrate": 832000,
                        "url": f"{media}/media/clip.mp4",
                    }
                ],
            },
        }
        return _tweet(
            case,
            BROOK,
            "A short clip " + video["url"],
            media,
            mediaDetails=[video],
            video={
                "aspectRatio": [16, 9],
                "contentType": "media_entity",
                "durationMs": 12500,
                "mediaAvailability": {"status": "available"},
                "poster": video["media_url_https"],
                "variants": [],
                "videoId": {"type": "tweet", "id": X_IDS[case]},
                "viewCount": 1234,
            },
        )
    if case == "quote":
        quoted = _tweet(
            "normal",
            ADA,
            "Reading about archives today",
            media,
            reply_count=1,
            retweet_count=2,
            self_thread={"id_str": X_IDS["normal"]},
        )
        return _tweet(case, CAL, "This is worth keeping", media, quoted_tweet=quoted)
    if case in ("reply", "reply_parent"):
        parent_case = "reply_parent" if case == "reply" else "reply_root"
        parent_user = BROOK if case == "reply" else ADA
        parent = _tweet(
            parent_case,
            parent_user,
            f"the {parent_case.replace('_', ' ')}",
            media,
            reply_count=1,
            retweet_count=0,
            **(
                {
                    "in_reply_to_status_id_str": X_IDS["reply_root"],
                    "in_reply_to_screen_name": "ada_example",
                }
                if case == "reply"
                else {}
            ),
        )
        user = CAL if case == "reply" else BROOK
        return _tweet(
            case,
            user,
            f"@{parent_user['screen_name']} agreed",
            media,
            parent=parent,
            in_reply_to_status_id_str=parent["id_str"],
            in_reply_to_screen_name=parent_user["screen_name"],
            in_reply_to_user_id_str=parent_user["id_str"],
        )
    if case == "reply_root":
        return _tweet(case, ADA, "the reply root", media)
    if case == "long":
        return _tweet(
            case, ADA, LONG_TEXT[:275] + "…", media, note_tweet={"id": "Tm90ZVR3ZWV0OjE="}
        )
    if case == "tombstone":
        return {
            "__typename": "TweetTombstone",
            "tombstone": {
                "text": {
                    "text": "This Post was deleted by the Post author. Learn more",
                    "entities": [],
                    "rtl": False,
                }
            },
        }
    if case == "protected":
        return {"__typename": "TweetUnavailable", "reason": "Protected"}
    raise KeyError(case)


def fxtwitter(case: str, media: str) -> tuple[int, dict[str, Any]]:
    """fxtwitter's answer `(HTTP status, {code, message, tweet})`."""
    if case in ("tombstone", "not_found"):
        return 404, {"code": 404, "message": "NOT_FOUND", "tweet": None}
    if case == "protected":
        return 401, {"code": 401, "message": "PRIVATE_TWEET", "tweet": None}
    user = {"normal": ADA, "long": ADA, "four_images": ADA, "video": BROOK}.get(case, CAL)
    photos = (
        [
            {"type": "photo", "url": f"{media}/media/photo{n}.png", "width": 64, "height": 48}
            for n in range(1, 5)
        ]
        if case == "four_images"
        else []
    )
    tweet = {
        "url": f"https://x.com/{user['screen_name']}/status/{X_IDS[case]}",
        "id": X_IDS[case],
        "text": LONG_TEXT.strip() if case == "long" else f"fx text of {case}",
        "author": {"id": user["id_str"], "name": user["name"], "screen_name": user["screen_name"]},
        "replies": 3,
        "retweets": 5,
        "likes": 42,
        "views": 1000,
        "created_at": "Wed May 01 12:00:00 +0000 2024",
        "created_timestamp": 1714564800,
        "lang": "en",
        "possibly_sensitive": False,
        "media": {"photos": photos, "all": photos} if photos else None,
    }
    return 200, {"code": 200, "message": "OK", "tweet": tweet}
