"""Per-site Netscape cookie files: only the link's site's file, only that site's cookies,
expired ones dropped, values never shown, scrubbed from text, handed to yt-dlp in a
private file deleted after use."""

from __future__ import annotations

import time
from pathlib import Path

from shared.cookies import REDACTED, load

FILE = """# Netscape HTTP Cookie File
.x.com\tTRUE\t/\tTRUE\t{future}\tauth_token\tsecret-auth-token-value
#HttpOnly_x.com\tFALSE\t/\tTRUE\t0\tct0\tsecret-csrf-value-123
.x.com\tTRUE\t/\tTRUE\t1000\told\texpired-secret-value
.evil.example\tTRUE\t/\tFALSE\t{future}\tleak\tother-site-secret
"""


def write(folder: Path) -> Path:
    path = folder / "x.com.txt"
    path.write_text(FILE.format(future=int(time.time()) + 86400))
    return path


def test_only_the_sites_unexpired_cookies(tmp_path: Path) -> None:
    write(tmp_path)
    got = load(tmp_path, "https://mobile.x.com/a/status/1")
    assert got.site == "x.com" and sorted(c.name for c in got.cookies) == ["auth_token", "ct0"]
    assert "secret" not in repr(got) and "count=2" in repr(got)
    assert not load(tmp_path, "https://example.org/")  # no file for that site
    assert not load(None, "https://x.com/a/status/1")
    assert not load(tmp_path / "missing", "https://x.com/a/status/1")


def test_values_are_scrubbed_and_playwright_gets_domain_or_host_only(tmp_path: Path) -> None:
    write(tmp_path)
    got = load(tmp_path, "https://x.com/a/status/1")
    assert (
        got.scrub("a secret-auth-token-value b secret-csrf-value-123")
        == f"a {REDACTED} b {REDACTED}"
    )
    pw = {c["name"]: c for c in got.for_playwright()}
    assert pw["auth_token"]["domain"] == ".x.com" and pw["auth_token"]["secure"]
    assert (
        pw["ct0"]["url"] == "https://x.com/"
        and pw["ct0"]["httpOnly"]
        and "expires" not in pw["ct0"]
    )


def test_the_file_for_ytdlp_is_private_and_removed(tmp_path: Path) -> None:
    write(tmp_path)
    got = load(tmp_path, "https://x.com/a/status/1")
    with got.netscape_file() as path:
        assert path.stat().st_mode & 0o077 == 0 and "secret-auth-token-value" in path.read_text()
        assert not path.is_relative_to(tmp_path)
    assert not path.exists() and not path.parent.exists()


def test_an_unreadable_file_counts_as_none(tmp_path: Path) -> None:
    (tmp_path / "x.com.txt").write_text("not a cookie file at all")
    assert not load(tmp_path, "https://x.com/a/status/1")


def test_a_cookies_folder_says_what_gives_no_capture_its_cookies(tmp_path: Path) -> None:
    """Said at the archiver's start (dla up prints it): files named for no site, files not
    read, a file that is not a Netscape cookies.txt; a folder that is not there. The content
    of a file is never shown."""
    from shared.cookies import folder_notes

    header = "# Netscape HTTP Cookie File\n"
    (tmp_path / "reddit.com.txt").write_text(header + "reddit.com\tTRUE\t/\tTRUE\t0\ts\tv\n")
    (tmp_path / "www.x.com.txt").write_text(header)
    (tmp_path / "cookies.txt").write_text(header)
    (tmp_path / "youtube.com.json").write_text("[]")
    (tmp_path / "tiktok.com.txt").write_text("tiktok.com\tTRUE\t/\tTRUE\t0\tsecret-value\tv\n")
    notes = folder_notes(str(tmp_path))
    assert notes == [
        "cookies.txt in COOKIES_DIR is named for no site: name it for its site"
        " (reddit.com.txt for Reddit)",
        "tiktok.com.txt in COOKIES_DIR is no Netscape cookies.txt: its first line must be"
        " '# Netscape HTTP Cookie File'",
        "www.x.com.txt in COOKIES_DIR is named for no site: name it x.com.txt",
        "youtube.com.json in COOKIES_DIR is never read: only <site>.txt files are",
    ]
    assert "secret-value" not in " ".join(notes)
    assert folder_notes(str(tmp_path / "gone")) == [
        f"COOKIES_DIR={str(tmp_path / 'gone')!r} is not a folder: no capture gets cookies"
    ]
    assert folder_notes("") == [] and folder_notes(None) == []
