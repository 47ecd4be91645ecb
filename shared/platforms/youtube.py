"""YouTube: yt-dlp's extraction (title, channel, description, upload time, counts; top
comments when `YOUTUBE_COMMENTS` asks for them, none by default). An unplayable video's
reason is YouTube's own ("This video has been removed by the uploader", "Private video"):
gone; "Sign in to confirm your age" or a bot check is unknown."""

from __future__ import annotations

from shared.links.video_key import media_key
from shared.platforms.chain import Chain, PostRef
from shared.platforms.embeds import ytdlp_step

PLATFORM = "youtube"
BASES: tuple[str, ...] = ()
"""The settings naming its API base URLs."""


def recognise(url: str) -> PostRef | None:
    """A YouTube video (watch, youtu.be, shorts, live, embed), or None."""
    key = media_key(url)
    if key is None or key.platform != "youtube":
        return None
    kind = "short" if "/shorts/" in url else "video"
    return PostRef(PLATFORM, key.video_id, url, kind=kind)


CHAIN: Chain = (("yt-dlp", ytdlp_step),)
