"""A small archive built through the writer's real apply path, for the web's tests.

Links (ids in order of creation):
  1 reddit thread, archived, hostile title, screenshot + raw HTML + article (the readable
    plugin's sanitised output of a hostile article, with one image copied), quoted once
  2 a page that answered 404: failed, E_FETCH_HTTP_404
  3 a page on a non-allowlisted domain: skipped (never listed)
  4 an IDN domain (bücher.de), archived, text about sourdough
  5 a post on X (fictional account), archived with its post (four images as our copies, the
    post it replies to, the post it quotes, counts) although the browser met a login wall
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from services.writer.db import open_db
from shared.content.sanitize import sanitize_html
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    HookRecord,
    MetadataRecord,
    PostRecord,
    TextRecord,
)
from shared.platforms.post import Author, Counts, Post, PostMedia
from testkit.writer_harness import Harness, done, event, occ, post

REDDIT = "https://www.reddit.com/r/Breadit/comments/x1/sourdough_starter/"
MISSING = "https://x.com/someone/status/404"
SKIPPED = "https://skipped.example/not-deletable"
IDN = "https://xn--bcher-kva.de/brot"
X_POST = "https://x.com/ada_example/status/1790000000000000002"
HOSTILE_TITLE = "<script>window.__pwned=1</script> Sourdough starter thread"
HOSTILE_TEXT = (
    "Feeding a sourdough starter twice a day keeps it lively. "
    '<img src=x onerror="window.__pwned=1"> javascript:alert(1) "quoted" AND OR * -'
)
HOSTILE_ARTICLE = (
    "<h2>Starter care</h2><p>Keep the <b>sourdough</b> warm.</p>"
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
    '<a href="javascript:window.__pwned=1">click</a>'
    '<a href="https://example.org/ok">a real link</a>'
    '<iframe src="javascript:window.__pwned=1"></iframe><style>body{display:none}</style>'
    '<figure><img src="/pics/loaf.png" alt="A loaf"></figure>'
    '<img src="https://tracker.example/pixel.gif" alt="not copied">'
)


def page_png(width: int = 800, height: int = 500, rgb: tuple[int, int, int] | None = None) -> bytes:
    """A PNG that looks like a screenshot of a page: a header bar and lines of 'text' (with
    `rgb`: a photo of that colour, lighter towards the bottom)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    white, header, text = b"\xff\xff\xff", b"\xff\x45\x00", b"\xc8\xc8\xd0"
    rows = []
    for y in range(height):
        if rgb is not None:
            shade = bytes(min(255, c + (255 - c) * y // (2 * height)) for c in rgb)
            rows.append(b"\x00" + shade * width)
            continue
        if y < 56:
            row = header * width
        elif 90 <= y < height - 40 and (y - 90) % 28 < 12:
            line = (y - 90) // 28
            length = width - 120 - (line * 97) % 260
            row = white * 40 + text * length + white * (width - 40 - length)
        else:
            row = white * width
        rows.append(b"\x00" + row)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + chunk(b"IEND", b"")
    )


PNG = page_png()
LOAF = page_png(120, 80)
ARTICLE = sanitize_html(
    HOSTILE_ARTICLE, REDDIT, {"https://www.reddit.com/pics/loaf.png": "images/1.png"}
)
"""What the readable plugin writes for HOSTILE_ARTICLE: the loaf's copy kept, the tracker
pixel (not copied) dropped."""
FETCH = "on_Snapshot__41_fetch.py"
META = "on_Snapshot__81_metadata.py"


@dataclass(frozen=True)
class StoredFile:
    """An artifact's bytes, for tests that put them in a real bucket."""

    s3_key: str
    data: bytes
    content_type: str


def _artifact(
    plugin: str, kind: str, path: str, data: bytes, ctype: str, link: int
) -> ArtifactRecord:
    return ArtifactRecord(
        plugin=plugin,
        kind=kind,
        path=path,
        s3_key=f"archives/{link}/s/{plugin}/{path}",
        content_type=ctype,
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _result(
    hook: str, status: str, code: str | None = None, output: str = ""
) -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(
        status=status,
        plugin=plugin,
        hook=hook,
        error_code=code,
        output_str=output,  # type: ignore[arg-type]
    )


COLOURS = [(200, 60, 60), (60, 160, 80), (60, 90, 200), (220, 170, 40)]
PHOTOS = [page_png(640, 480, c) for c in COLOURS]
"""Link 5's images."""


def x_post() -> Post:
    """Link 5's post: a reply quoting another post, with four images (fictional accounts)."""
    media = [
        PostMedia(
            kind="image",
            url=f"https://pbs.twimg.com/media/p{n}.png?name=orig",
            file=f"media/{n}.png",
            alt=f"The harbour, picture {n}",
            width=640,
            height=480,
            content_type="image/png",
        )
        for n in range(1, 5)
    ]
    parent = Post(
        platform="x",
        post_id="1790000000000000001",
        url="https://x.com/brook_sample/status/1790000000000000001",
        author=Author(name="Brook Sample", handle="brook_sample"),
        text="Who has pictures of the harbour from this morning?",
        created_at="2024-05-01T08:00:00Z",
        counts=Counts(likes=3),
        source="syndication",
    )
    quoted = Post(
        platform="x",
        post_id="1790000000000000003",
        url="https://x.com/caltest/status/1790000000000000003",
        author=Author(name="Cal Testwood", handle="caltest"),
        text="The harbour festival starts on Saturday https://example.org/festival",
        created_at="2024-04-30T18:30:00Z",
        source="syndication",
    )
    return Post(
        platform="x",
        post_id="1790000000000000002",
        url=X_POST,
        author=Author(name="Ada Example", handle="ada_example", id="1001"),
        text="Four pictures of the harbour at sunrise, before the festival.\nMore at https://example.org/harbour",
        created_at="2024-05-01T09:15:00Z",
        language="en",
        media=media,
        counts=Counts(likes=1204, reposts=87, replies=31, views=40210),
        parent=parent,
        quoted=quoted,
        source="syndication",
    )


def files() -> list[StoredFile]:
    """The bytes of the artifacts links 1 and 5 show, by S3 key."""
    return [
        *(
            StoredFile(f"archives/5/s/x/media/{n}.png", PHOTOS[n - 1], "image/png")
            for n in range(1, 5)
        ),
        StoredFile("archives/5/s/screenshot/screenshot.png", PNG, "image/png"),
        StoredFile("archives/1/s/screenshot/screenshot.png", PNG, "image/png"),
        StoredFile(
            "archives/1/s/fetch/body.html",
            b"<html><script>window.__pwned=1</script>raw</html>",
            "text/html",
        ),
        StoredFile("archives/1/s/readable/article.html", ARTICLE.encode(), "text/html"),
        StoredFile("archives/1/s/readable/images/1.png", LOAF, "image/png"),
    ]


def build(db_path: Path) -> Harness:
    """Fill a database at db_path; returns the harness (its connection is left open)."""
    h = Harness(open_db(db_path))
    h.apply(post("g1", occ(REDDIT), occ(MISSING), occ(SKIPPED)))
    h.apply(post("g2", occ(REDDIT, in_quote=True), occ(IDN)))
    jobs = {j.link_id: h.job(j.job_id) for j in h.dispatch()}
    stored = {f.s3_key: f for f in files()}
    one = jobs[1]
    records: list[HookRecord] = [
        _artifact("screenshot", "screenshot", "screenshot.png", PNG, "image/png", 1),
        _artifact(
            "fetch",
            "raw_response",
            "body.html",
            stored["archives/1/s/fetch/body.html"].data,
            "text/html",
            1,
        ),
        _artifact("readable", "article", "article.html", ARTICLE.encode(), "text/html", 1),
        _artifact("readable", "article_image", "images/1.png", LOAF, "image/png", 1),
        MetadataRecord(
            title=HOSTILE_TITLE,
            description="How to keep a starter <b>alive</b>",
            author="u/baker",
            site_name="reddit",
        ),
        TextRecord(text=HOSTILE_TEXT),
        _result(FETCH, "succeeded", output="body.html"),
        _result(META, "succeeded"),
    ]
    h.apply(*(event(one, i, r) for i, r in enumerate(records)), done(one, records=len(records)))
    two = jobs[2]
    h.apply(
        event(two, 0, _result(FETCH, "failed", "E_FETCH_HTTP_404", "HTTP 404 Not Found")),
        done(two, records=1),
    )
    h.apply(post("g3", occ(X_POST)))
    five = {j.link_id: h.job(j.job_id) for j in h.dispatch()}[5]
    x_records: list[HookRecord] = [
        PostRecord(post=x_post(), plugin="x"),
        *(
            _artifact("x", "post_media", f"media/{n}.png", PHOTOS[n - 1], "image/png", 5)
            for n in range(1, 5)
        ),
        _artifact("screenshot", "screenshot", "screenshot.png", PNG, "image/png", 5),
        _result("on_Snapshot__15_x.py", "succeeded", output="post via syndication"),
        _result("on_Snapshot__21_navigate.py", "partial", "E_NAVIGATE_LOGIN_WALL", "login page"),
        MetadataRecord(title="Ada Example (@ada_example) on X", author="Ada Example"),
    ]
    h.apply(
        *(event(five, i, r) for i, r in enumerate(x_records)), done(five, records=len(x_records))
    )
    four = jobs[4]
    h.advance(minutes=5)
    h.apply(
        event(four, 0, MetadataRecord(title="Brot backen")),
        event(four, 1, TextRecord(text="Sauerteig sourdough bread from bücher")),
        event(four, 2, _result(FETCH, "succeeded")),
        done(four, records=3),
    )
    return h
