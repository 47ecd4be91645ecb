"""TikTok's, Instagram's, Facebook's and Telegram's pages and oEmbed answers in each
platform's documented shape, for fictional accounts (testkit.platform_server serves them),
and a login page."""

from __future__ import annotations

import json
from typing import Any

# -- TikTok, Instagram, Facebook, Telegram, oEmbed ----------------------------------------

TIKTOK_IDS = {
    "normal": "7300000000000000001",
    "photo": "7300000000000000002",
    "private": "7300000000000000003",
    "not_found": "7300000000000000010",
    "rate_limited": "7300000000000000011",
    "html": "7300000000000000013",
    "malformed": "7300000000000000015",
    "login": "7300000000000000012",
}


def tiktok_item(case: str, media: str) -> dict[str, Any]:
    """TikTok's itemStruct (as its page's rehydration data holds it)."""
    item: dict[str, Any] = {
        "id": TIKTOK_IDS[case],
        "desc": "Morning by the river #walk",
        "createTime": "1714550400",
        "author": {
            "id": "6800000000000000001",
            "uniqueId": "ada.example",
            "nickname": "Ada Example",
            "secUid": "MS4wLjABAAAAexample",
        },
        "stats": {"diggCount": 1200, "shareCount": 30, "commentCount": 45, "playCount": 50000},
        "textLanguage": "en",
        "video": {
            "id": TIKTOK_IDS[case],
            "height": 1280,
            "width": 720,
            "duration": 15,
            "cover": f"{media}/media/cover.png",
            "originCover": f"{media}/media/cover.png",
        },
    }
    if case == "photo":
        item["imagePost"] = {
            "images": [
                {
                    "imageURL": {"urlList": [f"{media}/media/photo{n}.png"]},
                    "imageWidth": 64,
                    "imageHeight": 48,
                }
                for n in range(1, 4)
            ],
            "title": "three photos",
        }
        item["video"] = {"id": "", "duration": 0, "cover": f"{media}/media/cover.png"}
    return item


def tiktok_page(case: str, media: str) -> str:
    """A TikTok post page with its rehydration data."""
    if case == "private":
        detail: dict[str, Any] = {"statusCode": 10216, "statusMsg": "author_secret"}
    else:
        detail = {
            "statusCode": 0,
            "statusMsg": "",
            "itemInfo": {"itemStruct": tiktok_item(case, media)},
        }
    data = {"__DEFAULT_SCOPE__": {"webapp.video-detail": detail}}
    return (
        "<!DOCTYPE html><html><head><title>TikTok</title></head><body><div id=app></div>"
        '<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">'
        f"{json.dumps(data)}</script></body></html>"
    )


def oembed(platform: str, media: str) -> dict[str, Any]:
    """An oEmbed answer."""
    return {
        "version": "1.0",
        "type": "video",
        "title": f"A {platform} post by Ada",
        "author_name": "Ada Example",
        "author_url": "https://www.tiktok.com/@ada.example",
        "author_unique_id": "ada.example",
        "provider_name": platform,
        "thumbnail_url": f"{media}/media/cover.png",
        "thumbnail_width": 64,
        "thumbnail_height": 48,
        "html": "<blockquote>…</blockquote>",
    }


def instagram_embed(code: str, media: str) -> str:
    """Instagram's public embed page (captioned)."""
    return f"""<!DOCTYPE html><html><head><title>Instagram</title></head><body>
<div class="Embed" data-media-type="GraphImage"><div class="Header">
<a class="Avatar"><img src="{media}/media/avatar.png"></a>
<div class="HeaderText"><a class="UsernameText"
 href="https://www.instagram.com/ada.example/">ada.example</a></div></div>
<div class="EmbeddedMedia"><img class="EmbeddedMediaImage" alt="A harbour at dusk"
 src="{media}/media/photo1.png"
 srcset="{media}/media/photo2.png 320w, {media}/media/photo1.png 640w"></div>
<div class="Caption"><a class="CaptionUsername"
 href="https://www.instagram.com/ada.example/">ada.example</a><br><br>
Harbour at dusk, post {code}<br>#evening<div class="CaptionComments">View all 12 comments
</div></div>
</div></body></html>"""


def telegram_widget(channel: str, post_id: str, media: str, gone: bool = False) -> str:
    """Telegram's embed widget of a channel post."""
    if gone:
        return (
            '<html><body><div class="tgme_widget_message_error">Post not found</div></body></html>'
        )
    return f"""<html><body><div class="tgme_widget_message js-widget_message"
 data-post="{channel}/{post_id}"><div class="tgme_widget_message_author accent_color">
<a class="tgme_widget_message_owner_name" href="https://t.me/{channel}"><span
 dir="auto">Example Channel</span></a></div>
<a class="tgme_widget_message_photo_wrap" href="https://t.me/{channel}/{post_id}"
 style="width:640px;background-image:url('{media}/media/photo3.png')"></a>
<div class="tgme_widget_message_text js-message_text" dir="auto">News of the day<br/>read
 <a href="https://example.org/news/of-the-day-in-full"
 target="_blank">example.org/news/of-the…</a></div>
<div class="tgme_widget_message_footer"><span class="tgme_widget_message_views">12.3K</span>
<time datetime="2024-05-03T09:15:00+00:00" class="time">09:15</time></div></div></body></html>"""


def facebook_embed(media: str) -> str:
    """Facebook's embedded-post page."""
    return f"""<html><body><div class="_li"><span class="fwb"><a
 href="https://www.facebook.com/examplepage">Example Page</a></span>
<abbr data-utime="1714737600">3 May</abbr>
<div data-testid="post_message" class="userContent"><p>Opening hours change next week.</p>
<p>See you there.</p></div>
<img class="scaledImageFitWidth img" src="{media}/media/photo4.png" alt="The shop front">
</div></body></html>"""


LOGIN_PAGE = """<!DOCTYPE html><html><head><title>Log in</title></head><body>
<form action="/accounts/login/ajax/" method="post"><h1>Log in to continue</h1>
<input name="username" placeholder="Phone number, username, or email">
<input type="password" name="password" placeholder="Password"><button>Log in</button>
</form><p>Don't have an account? Sign up</p></body></html>"""
