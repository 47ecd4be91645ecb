"""Mastodon's answers in the documented shape (the Status entity of `GET
/api/v1/statuses/:id`, docs.joinmastodon.org/entities/Status), for fictional accounts on a
fictional instance (testkit.platform_server serves them under `/mastodon`)."""

from __future__ import annotations

from typing import Any

INSTANCE = "https://mastodon.social"
"""The instance the test links name (one of MASTODON_INSTANCES' defaults); the API is asked
of the local server (MASTODON_API_URL)."""
STATUS_IDS = {
    "normal": "113000000000000001",
    "two_images": "113000000000000002",
    "reply": "113000000000000003",
    "video": "113000000000000004",
    "not_found": "113000000000000010",
    "rate_limited": "113000000000000011",
    "server_error": "113000000000000012",
    "html": "113000000000000013",
    "malformed": "113000000000000014",
}
ACCOUNT: dict[str, Any] = {
    "id": "109000000000000001",
    "username": "ada",
    "acct": "ada",
    "display_name": "Ada Example",
    "locked": False,
    "bot": False,
    "discoverable": True,
    "group": False,
    "created_at": "2022-11-05T00:00:00.000Z",
    "note": "<p>Fictional account for tests.</p>",
    "url": f"{INSTANCE}/@ada",
    "uri": f"{INSTANCE}/users/ada",
    "avatar": f"{INSTANCE}/avatars/original/missing.png",
    "avatar_static": f"{INSTANCE}/avatars/original/missing.png",
    "header": f"{INSTANCE}/headers/original/missing.png",
    "header_static": f"{INSTANCE}/headers/original/missing.png",
    "followers_count": 12,
    "following_count": 3,
    "statuses_count": 40,
    "last_status_at": "2024-05-01",
    "emojis": [],
    "fields": [],
}


def status_url(case: str, handle: str = "ada") -> str:
    """The link to a case's status, as readers post it."""
    return f"{INSTANCE}/@{handle}/{STATUS_IDS[case]}"


def _attachment(n: int, kind: str, media: str) -> dict[str, Any]:
    ext = "mp4" if kind == "video" else "png"
    return {
        "id": f"11200000000000000{n}",
        "type": kind,
        "url": f"{media}/media/mastodon-{n}.{ext}",
        "preview_url": f"{media}/media/mastodon-{n}-small.png",
        "remote_url": None,
        "meta": {
            "original": {"width": 64, "height": 48, "size": "64x48", "aspect": 1.3333333333333333}
            | ({"duration": 3.5} if kind == "video" else {}),
            "small": {"width": 32, "height": 24, "size": "32x24", "aspect": 1.3333333333333333},
        },
        "description": f"Picture {n} of a test",
        "blurhash": "UFBWY:8_0Jxv~qRjIURj4nIU-;Rj%MRjWBWB",
    }


def status(case: str, media: str) -> dict[str, Any]:
    """A Status entity for a case (its media served by the local server at `media`)."""
    sid = STATUS_IDS[case]
    attachments = {
        "two_images": [_attachment(1, "image", media), _attachment(2, "image", media)],
        "video": [_attachment(3, "video", media)],
    }.get(case, [])
    reply_to = STATUS_IDS["normal"] if case == "reply" else None
    return {
        "id": sid,
        "created_at": "2024-05-01T12:30:00.000Z",
        "in_reply_to_id": reply_to,
        "in_reply_to_account_id": ACCOUNT["id"] if reply_to else None,
        "sensitive": False,
        "spoiler_text": "",
        "visibility": "public",
        "language": "en",
        "uri": f"{INSTANCE}/users/ada/statuses/{sid}",
        "url": f"{INSTANCE}/@ada/{sid}",
        "replies_count": 1 if case == "normal" else 0,
        "reblogs_count": 4,
        "favourites_count": 7,
        "edited_at": None,
        "content": (
            f"<p>A test status ({case}) with a link "
            '<a href="https://example.org/a/long/path" rel="nofollow noopener" target="_blank">'
            '<span class="invisible">https://</span><span class="ellipsis">example.org/a/lo'
            '</span><span class="invisible">ng/path</span></a></p><p>Second paragraph.</p>'
        ),
        "reblog": None,
        "application": {"name": "Web", "website": None},
        "account": ACCOUNT,
        "media_attachments": attachments,
        "mentions": [],
        "tags": [],
        "emojis": [],
        "card": None,
        "poll": None,
    }
