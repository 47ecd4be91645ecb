"""The reddit plugin's hook (Reddit's chain: its pages, then the thread JSON) as a real
process (forked from the test process's hook host, as the archiver runs it) against a
fixture server on 127.0.0.1 standing in for old.reddit.com, www.reddit.com and the JSON
endpoint (their bases are settings)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.hooks.error_codes import backs_off_domain
from shared.hooks.records import ArchiveResultRecord, HookRecord, PostRecord, parse_record
from testkit.hook_runs import run_hook
from testkit.httpserver import FixtureServer, Reply

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__15_reddit.py"
CORPORA = Path(__file__).resolve().parents[3].parent / "shared" / "corpora"
LINK = "https://www.reddit.com/r/t/comments/abc123/a_title/"
PATH = "/r/t/comments/abc123/a_title/"
THREAD_PAGE = (
    b"<html><head><title>A title : t</title></head><body><div class='thing'>"
    b"<a href='/r/t/comments/abc123/a_title/'>A title</a><p>Self text</p></div></body></html>"
)
THREAD_JSON: list[dict[str, Any]] = [
    {"kind": "Listing", "data": {"children": [{"kind": "t3", "data": {
        "title": "A title", "author": "op", "subreddit_name_prefixed": "r/t",
        "created_utc": 1700000000.0, "permalink": PATH, "selftext": "Self text"}}]}},
    {"kind": "Listing", "data": {"children": [{"kind": "t1", "data": {
        "author": "alice", "body": "Nice post", "replies": ""}}]}},
]  # fmt: skip
HTML = {"Content-Type": "text/html; charset=utf-8"}
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def reddit() -> Iterator[FixtureServer]:
    """Prefixes: /ok (the thread), /lw (login wall), /gate (over-18), /blocked (403),
    /limited (429)."""
    with FixtureServer() as s:
        body = json.dumps(THREAD_JSON).encode()
        s.routes[f"/ok{PATH}"] = Reply(THREAD_PAGE, headers=HTML)
        s.routes[f"/ok{PATH.rstrip('/')}/.json"] = Reply(body, headers=JSON)
        s.routes[f"/lw{PATH}"] = Reply(b"", 302, {"Location": f"/lw/login/?dest={PATH}"})
        s.routes["/lw/login/"] = Reply(b"<title>reddit - Log in</title><form>", headers=HTML)
        s.routes[f"/lw{PATH.rstrip('/')}/.json"] = Reply(b"", 302, {"Location": "/lw/login/"})
        s.routes[f"/gate{PATH}"] = Reply(b"", 302, {"Location": "/gate/over18?dest=x"})
        s.routes["/gate/over18"] = Reply(b"<p>are you over eighteen and willing", headers=HTML)
        whoa = Reply(b"<h1>whoa there, pardner!</h1>", 403, HTML)
        s.routes[f"/blocked{PATH}"] = whoa
        s.routes[f"/blocked{PATH.rstrip('/')}/.json"] = whoa
        # Reddit's rate limit as it answers it: the page with Retry-After, the JSON with its
        # window's counters (github.com/dkhamsing/awesome_bot/issues/86, praw-dev/praw#2046)
        s.routes[f"/limited{PATH}"] = Reply(
            b"<title>Too Many Requests</title>", 429, {**HTML, "retry-after": "600"}
        )
        s.routes[f"/limited{PATH.rstrip('/')}/.json"] = Reply(
            b'{"message": "Too Many Requests", "error": 429}', 429,
            {**JSON, "x-ratelimit-remaining": "0", "x-ratelimit-used": "100",
             "x-ratelimit-reset": "540"},
        )  # fmt: skip
        optout = {**HTML, "X-No-Archive": "yes"}
        s.routes[f"/optout{PATH}"] = Reply(THREAD_PAGE, headers=optout)
        s.routes[f"/optout{PATH.rstrip('/')}/.json"] = Reply(body, headers=JSON)
        meta = THREAD_PAGE.replace(b"<head>", b'<head><meta name="x-no-archive" content="1">')
        s.routes[f"/optmeta{PATH}"] = Reply(meta, headers=HTML)
        s.routes[f"/optjson{PATH.rstrip('/')}/.json"] = Reply(
            body, headers={**JSON, "X-No-Archive": "1"}
        )
        yield s


def run(cwd: Path, link: str = LINK, **bases: str) -> tuple[int, list[HookRecord]]:
    env = {
        **os.environ,
        "REDDIT_OLD_BASE": bases.get("old", ""),
        "REDDIT_WWW_BASE": bases.get("www", ""),
        "REDDIT_JSON_BASE": bases.get("json", ""),
        "REDDIT_REQUEST_TIMEOUT": "10",
        "ALLOW_PRIVATE_TARGETS": bases.get("allow_private", "true"),
    }
    proc = run_hook(HOOK, [f"--url={link}"], cwd, env, timeout=60)
    records = [parse_record(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    return proc.returncode, records


def result(records: list[HookRecord]) -> ArchiveResultRecord:
    return [r for r in records if isinstance(r, ArchiveResultRecord)][-1]


def report(cwd: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cwd / "reddit.json").read_text())
    return data


def attempts(cwd: Path) -> list[tuple[str, str]]:
    """(step, reason) of every attempt in reddit.json."""
    return [(a["step"], a["reason"]) for a in report(cwd)["attempts"]]


def test_old_reddit_and_json(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/ok", www=f"{b}/blocked", json=f"{b}/ok")
    assert code == 0 and result(records).status == "succeeded"
    assert result(records).output_str == (
        "post via thread-json: old-page: kept page.html; thread-json: present"
    )
    assert (tmp_path / "page.html").read_bytes() == THREAD_PAGE
    assert attempts(tmp_path) == [("old-page", "kept"), ("thread-json", "ok")]
    assert report(tmp_path)["source"] == "thread-json"
    assert not any(p.startswith("/blocked") for p, _ in reddit.requests)  # www not needed
    thread = (tmp_path / "thread.html").read_text()
    assert "<h1>A title</h1>" in thread and "u/alice" in thread and "Nice post" in thread
    post = json.loads((tmp_path / "meta.json").read_text())
    assert post["title"] == "A title" and post["author"] == "op" and post["site_name"] == "r/t"
    assert json.loads((tmp_path / "thread.json").read_text()) == THREAD_JSON
    kept = json.loads((tmp_path / "post.json").read_text())
    assert kept["source"] == "thread-json" and kept["text"] == "Self text"
    assert kept["author"]["handle"] == "op" and kept["replies"][0]["text"] == "Nice post"
    posts = [r for r in records if isinstance(r, PostRecord)]
    assert len(posts) == 1 and posts[0].post.title == "A title"


def test_login_wall_falls_back_to_www(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/lw", www=f"{b}/ok", json=f"{b}/ok")
    assert code == 0 and result(records).status == "succeeded"
    assert attempts(tmp_path) == [
        ("old-page", "login_wall"), ("www-page", "kept"), ("thread-json", "ok")
    ]  # fmt: skip
    assert (tmp_path / "page.html").read_bytes() == THREAD_PAGE


def test_blocked_and_over18_leave_the_json_alone(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/blocked", www=f"{b}/gate", json=f"{b}/ok")
    assert code == 0 and result(records).status == "succeeded"
    assert attempts(tmp_path) == [
        ("old-page", "blocked"), ("www-page", "age_gate"), ("thread-json", "ok")
    ]  # fmt: skip
    assert not (tmp_path / "page.html").exists() and (tmp_path / "thread.html").exists()


def test_everything_blocked_is_a_hard_failure(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/blocked", www=f"{b}/blocked", json=f"{b}/blocked")
    assert code == 1
    assert result(records).status == "failed" and result(records).error_code == "E_REDDIT_BLOCKED"


def test_a_rate_limit_is_no_block_page_its_wait_is_kept(
    reddit: FixtureServer, tmp_path: Path
) -> None:
    """A 429 backs reddit.com off (E_REDDIT_RATE_LIMITED; a block page does not), and the
    longest wait its answers asked for goes with the result."""
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/limited", www=f"{b}/blocked", json=f"{b}/limited")
    ending = result(records)
    assert code == 1 and (ending.status, ending.error_code) == ("failed", "E_REDDIT_RATE_LIMITED")
    assert backs_off_domain(ending.error_code) and ending.retry_after_s == 600
    assert attempts(tmp_path) == [
        ("old-page", "rate_limited"), ("www-page", "blocked"), ("thread-json", "rate_limited")
    ]  # fmt: skip
    waits = [a.get("retry_after_s") for a in report(tmp_path)["attempts"]]
    assert waits == [600, None, 540]


def test_login_walls_everywhere_are_a_soft_failure(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/lw", www=f"{b}/lw", json=f"{b}/lw")
    assert code == 0
    assert result(records).error_code == "E_REDDIT_LOGIN_WALL"
    assert attempts(tmp_path)[-1] == ("thread-json", "login_wall")  # a 200: says nothing


def test_production_mode_refuses_private_addresses(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    code, records = run(
        tmp_path, old=f"{b}/ok", www=f"{b}/ok", json=f"{b}/ok", allow_private="false"
    )
    assert code == 0  # refusing again later cannot help
    assert result(records).error_code == "E_REDDIT_REFUSED"
    assert [reason for _, reason in attempts(tmp_path)] == ["refused"] * 3
    assert reddit.requests == []


def test_every_exchange_is_in_the_warc(reddit: FixtureServer, tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/lw", www=f"{b}/ok", json=f"{b}/ok")
    assert code == 0 and result(records).status == "succeeded"
    with (tmp_path / "reddit.warc.gz").open("rb") as f:
        uris = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)
                if r.rec_type == "response"]  # fmt: skip
    assert any("/lw/login/" in u for u in uris) and any(u.endswith("raw_json=1") for u in uris)


def test_praw_recording_served_as_the_json(reddit: FixtureServer, tmp_path: Path) -> None:
    recorded = CORPORA / "platforms" / "reddit" / "json" / "2gmzqe_selfpost.json"
    if not recorded.exists():
        pytest.skip("../shared/corpora not present")
    reddit.routes[f"/praw{PATH.rstrip('/')}/.json"] = Reply(recorded.read_bytes(), headers=JSON)
    b = reddit.base
    code, _ = run(tmp_path, old=f"{b}/ok", www=f"{b}/ok", json=f"{b}/praw")
    assert code == 0
    post = json.loads((tmp_path / "meta.json").read_text())
    assert post["title"] == "[PRAW] HTTPS enabled PRAW testing needed"
    assert post["author"] == "bboe" and post["published_at"] == "2014-09-17T06:34:31Z"


def test_a_subreddit_keeps_its_page_alone(reddit: FixtureServer, tmp_path: Path) -> None:
    reddit.routes["/ok/r/t/"] = Reply(THREAD_PAGE, headers=HTML)
    b = reddit.base
    code, records = run(
        tmp_path, link="https://old.reddit.com/r/t/", old=f"{b}/ok", www=f"{b}/ok", json=f"{b}/ok"
    )
    assert code == 0 and result(records).status == "succeeded"
    assert result(records).output_str.startswith("kept page.html")
    assert attempts(tmp_path) == [("old-page", "kept")]
    assert (tmp_path / "page.html").read_bytes() == THREAD_PAGE
    assert not (tmp_path / "post.json").exists() and not (tmp_path / "thread.json").exists()
    assert [p for p, _ in reddit.requests] == ["/ok/r/t/"]


def test_other_links_are_skipped(tmp_path: Path) -> None:
    code, records = run(tmp_path, link="https://example.org/a")
    assert code == 0 and result(records).status == "skipped"


def test_a_video_post_says_so_in_meta_json(tmp_path: Path) -> None:
    video = json.loads(json.dumps(THREAD_JSON))
    video[0]["data"]["children"][0]["data"].update(
        is_video=True, secure_media={"reddit_video": {"fallback_url": "https://v.redd.it/x"}}
    )
    with FixtureServer() as s:
        s.routes[f"/v{PATH.rstrip('/')}/.json"] = Reply(json.dumps(video).encode(), headers=JSON)
        code, records = run(
            tmp_path, old=f"{s.base}/none", www=f"{s.base}/none", json=f"{s.base}/v"
        )
    assert code == 0 and result(records).status == "succeeded"
    assert json.loads((tmp_path / "meta.json").read_text())["has_video"] is True


def test_a_text_post_is_no_video(reddit: FixtureServer, tmp_path: Path) -> None:
    b = reddit.base
    run(tmp_path, old=f"{b}/ok", www=f"{b}/ok", json=f"{b}/ok")
    assert json.loads((tmp_path / "meta.json").read_text())["has_video"] is False


@pytest.mark.parametrize(
    ("old", "json_base"), [("optout", "ok"), ("optmeta", "ok"), ("ok", "optjson")]
)
def test_an_opted_out_thread_keeps_nothing(
    reddit: FixtureServer, tmp_path: Path, old: str, json_base: str
) -> None:
    b = reddit.base
    code, records = run(tmp_path, old=f"{b}/{old}", www=f"{b}/ok", json=f"{b}/{json_base}")
    assert code == 0
    ended = result(records)
    assert (ended.status, ended.error_code) == ("failed", "E_REDDIT_DECLINED")
    assert "asks not to be archived" in ended.output_str
    assert not any(isinstance(r, PostRecord) for r in records)
    assert list(tmp_path.iterdir()) == []  # no page, JSON, post, WARC or report
    if old != "ok":  # a page that opts out: its JSON is not even asked for
        assert not any(p.endswith(".json") for p, _ in reddit.requests)
