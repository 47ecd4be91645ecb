"""Local media fixtures: test clips made with ffmpeg, and a server that can throttle or stall.

Used by the media plugin's tests and the media service tests (127.0.0.x only).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from testkit.httpserver import serving_thread

FFMPEG = shutil.which("ffmpeg")


def make_clip(path: Path, seconds: float = 2, size: str = "160x120", rate: int = 10) -> Path:
    """A small H.264+AAC mp4 (test pattern and a sine tone)."""
    assert FFMPEG, "ffmpeg is required (deploy/install-system-deps.sh)"
    subprocess.run(
        [FFMPEG, "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", f"testsrc=duration={seconds}:size={size}:rate={rate}",
         "-f", "lavfi", "-i", f"sine=duration={seconds}",
         "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
         "-movflags", "+faststart", str(path)],
        check=True, timeout=120,
    )  # fmt: skip
    return path


def make_audio(path: Path, seconds: float = 2) -> Path:
    """A small MP3 (a sine tone): a podcast's episode."""
    assert FFMPEG, "ffmpeg is required (deploy/install-system-deps.sh)"
    subprocess.run(
        [FFMPEG, "-loglevel", "error", "-y", "-f", "lavfi", "-i", f"sine=duration={seconds}",
         "-c:a", "libmp3lame", str(path)],
        check=True, timeout=120,
    )  # fmt: skip
    return path


def make_hls(clip: Path, folder: Path) -> Path:
    """An HLS VOD playlist (`index.m3u8` + 1-second .ts segments) of a clip."""
    assert FFMPEG
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [FFMPEG, "-loglevel", "error", "-y", "-i", str(clip), "-c", "copy", "-f", "hls",
         "-hls_time", "1", "-hls_playlist_type", "vod", str(folder / "index.m3u8")],
        check=True, timeout=120,
    )  # fmt: skip
    return folder / "index.m3u8"


@dataclass
class Served:
    """One route: its body and how to send it."""

    body: bytes
    content_type: str = "text/html"
    bytes_per_second: int = 0
    """Throttle (0 = as fast as possible)."""
    stall_after: int | None = None
    """Send this many bytes, then hang (until the client gives up or the server stops)."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    """More response headers (an `X-No-Archive`)."""
    cookie: str | None = None
    """A `name=value` the request's Cookie header must hold, else 403 (a video behind a
    login)."""


class MediaServer:
    """Serves `routes` (path -> Served) on host:free port; throttles and stalls on demand."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Served] = {}
        self.hits: list[str] = []
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                server.hits.append(self.path)
                route = server.routes.get(path)
                if route is None:
                    self.send_error(404)
                    return
                sent = [c.strip() for c in (self.headers.get("Cookie") or "").split(";")]
                if route.cookie is not None and route.cookie not in sent:
                    self.send_error(403, "log in first")
                    return
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.send_body(self.wfile, route)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self.thread = serving_thread(self.httpd)

    def send_body(self, out: Any, route: Served) -> None:
        body, sent, chunk = route.body, 0, 16384
        if route.bytes_per_second:
            chunk = max(1024, route.bytes_per_second // 20)
        while sent < len(body):
            if route.stall_after is not None and sent >= route.stall_after:
                self.stopping.wait()
                return
            end = min(len(body), sent + chunk)
            if route.stall_after is not None:
                end = min(end, max(route.stall_after, sent + 1))
            out.write(body[sent:end])
            out.flush()
            if route.bytes_per_second:
                time.sleep((end - sent) / route.bytes_per_second)
            sent = end

    @property
    def base(self) -> str:
        """http://host:port"""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> MediaServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
