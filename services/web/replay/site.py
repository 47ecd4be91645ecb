"""Whether this web replays captures, and where: the replay origin and the viewer's files."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from starlette.responses import FileResponse

from services.web.replay import bundle
from services.web.settings import WebSettings

log = logging.getLogger(__name__)
BASE = "/replay/"
"""Where the viewer's service worker is served, and so its scope (``replayBase``)."""


@dataclass(frozen=True)
class ReplaySite:
    """The replay origin (``scheme://host[:port]``) and the viewer's files."""

    origin: str
    files: Path
    pin: bundle.Pin = bundle.REPLAYWEBPAGE

    def view_url(self, wacz_id: int) -> str:
        """The replay origin's page that replays this WACZ."""
        return f"{self.origin}/view/{wacz_id}"


def replay_site(settings: WebSettings) -> ReplaySite | None:
    """The replay of these settings, or None: no origin (``REPLAY_ORIGIN=off``, or a UI not
    on loopback with none set), or the viewer's files missing (``make bootstrap`` fetches
    them). Raises when REPLAY_ORIGIN names the UI's own host."""
    origin = settings.replay()
    if origin is None:
        return None
    files = settings.replay_bundle_dir or bundle.default_dir()
    if not bundle.is_complete(files):
        log.warning(
            "no replay: %s %s is not in %s (run `make bootstrap` or "
            "`python -m services.web.replay.bundle`)",
            bundle.REPLAYWEBPAGE.name,
            bundle.REPLAYWEBPAGE.version,
            files,
        )
        return None
    return ReplaySite(origin, files)


def licence_file(site: ReplaySite) -> FileResponse:
    """The viewer's LICENSE, as its package ships it (the UI and the replay origin serve it)."""
    return FileResponse(site.files / "LICENSE", media_type="text/plain; charset=utf-8")


def source_file(site: ReplaySite) -> FileResponse:
    """The viewer's npm tarball, its source included (the UI and the replay origin serve it)."""
    name = site.pin.tarball_name
    return FileResponse(site.files / name, media_type="application/gzip", filename=name)
