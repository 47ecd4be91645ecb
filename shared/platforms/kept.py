"""The files a platform plugin's chain may keep beside its post for the other plugins to read
(Reddit's does: shared/platforms/reddit.py), named the same whichever platform keeps them,
and where a reader finds them: in the snapshot folder of the platform's plugin.
"""

from __future__ import annotations

from pathlib import Path

from shared.platforms.registry import SITES

PAGE = "page.html"
"""The link's HTML page as the platform serves it without scripts: the raw page the
metadata and readable plugins read, before the fetch plugin's body."""
ARTICLE = "thread.html"
"""The post (with its comments) as one readable HTML article: the readable plugin's."""
METADATA = "meta.json"
"""The page's metadata as the platform's data says it (PageMetadata's fields and
`has_video`): the metadata plugin's, winning over what the pages say."""


def find(snapshot: Path, name: str) -> tuple[str, Path] | None:
    """(platform, path) of the platform plugin's folder in `snapshot` that kept `name`."""
    for platform in SITES:
        path = snapshot / platform / name
        if path.is_file():
            return platform, path
    return None
