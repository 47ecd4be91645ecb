"""Bad input never answers 500: a clear 4xx for every malformed request."""

from __future__ import annotations

import httpx
import pytest

BAD_GETS = [
    "/links/0", "/links/-1", "/links/abc", "/links/99999999999999999999999", "/links/1.5.json",
    "/links/9223372036854775808.json", "/artifacts/0", "/artifacts/99999999999999999999999",
    "/index.json?limit=0", "/index.json?limit=1001", "/index.json?limit=abc",
    "/index.json?cursor=zzz", "/index.json?cursor=" + "A" * 300, "/index.json?cursor=%ff%fe",
    "/search.json?q=" + "x" * 600, "/search.json?q=a&limit=101", "/search.json?q=a&since=yesterday",
    "/search.json?q=a&until=2026-13-45", "/search.json?q=a&status=bogus", "/search.json?q=a&sort=x",
    "/search.json?q=a&has_video=maybe", "/search.json?q=a&cursor=-4", "/search.json?q=a&cursor=1e9",
    "/search.json?q=a&cursor=99999999999999999999", "/submissions/nothex.json",
    "/submissions/" + "a" * 33 + ".json", "/search.json?q=%ED%A0%80",
]  # fmt: skip


@pytest.mark.parametrize("path", BAD_GETS)
async def test_malformed_gets_answer_4xx_with_a_message(
    client: httpx.AsyncClient, path: str
) -> None:
    resp = await client.get(path)
    assert 400 <= resp.status_code < 500 or (resp.status_code == 200 and "q=%ED" in path), path
    if resp.status_code >= 400:
        assert resp.json()["error"], path


async def test_unknown_ids_are_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/links/999.json")).status_code == 404
    page = await client.get("/links/999", headers={"accept": "text/html"})
    assert page.status_code == 404 and "no link 999" in page.text
    assert (await client.get("/artifacts/999")).status_code == 404


BAD_POSTS = [
    ({"content-type": "application/json"}, b"{not json", 400),
    ({"content-type": "application/json"}, b"[1, 2]", 400),
    ({"content-type": "application/json"}, b'"just a string"', 400),
    ({"content-type": "application/json"}, b'{"url": 5}', 400),
    ({"content-type": "application/json"}, b'{"url": "\\ud800"}', 400),
    ({"content-type": "application/json"}, b'{"url": "https://x.com/\\ud800"}', 400),
    ({"content-type": "application/json"}, b"\xff\xfe", 400),
    ({"content-type": "application/json"}, b"{}", 400),
    ({"content-type": "application/x-www-form-urlencoded"}, b"url=%ff%fe", 400),
    ({"content-type": "application/x-www-form-urlencoded"}, b"url=javascript%3Aalert(1)", 400),
    ({"content-type": "multipart/form-data; boundary=x"}, b"--x\r\ngarbage", 400),
    ({"content-type": "multipart/form-data"}, b"no boundary", 400),
    ({"content-type": "text/plain"}, b"https://x.com/a", 415),
    ({"content-type": "application/json"}, b'{"url": "' + b"a" * 20000 + b'"}', 413),
]


@pytest.mark.parametrize(("headers", "body", "status"), BAD_POSTS)
async def test_malformed_submissions_answer_4xx(
    client: httpx.AsyncClient, headers: dict[str, str], body: bytes, status: int
) -> None:
    resp = await client.post("/submit", content=body, headers=headers)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("javascript:alert(1)", "unsupported-scheme"),
        ("ftp://x.org/", "unsupported-scheme"),
        ("not a url", ""),
        ("https://web.archive.org/web/2020/https://x.com/", "excluded:web.archive.org"),
        ("https://sub.archive.ph/abc", "excluded:archive.ph"),
        ("http://" + "a" * 5000, "too-long"),
    ],
)
async def test_submissions_the_writer_would_reject_get_400_with_the_reason(
    client: httpx.AsyncClient, url: str, reason: str
) -> None:
    resp = await client.post("/submit", json={"url": url})
    assert resp.status_code == 400
    assert reason in resp.json()["error"]


async def test_a_valid_submission_without_nats_is_503_not_500(client: httpx.AsyncClient) -> None:
    resp = await client.post("/submit", json={"url": "https://x.com/a/status/1"})
    assert resp.status_code == 503 and "cannot take requests" in resp.json()["error"]
    resp = await client.post("/links/1/rearchive")
    assert resp.status_code == 503
    assert (await client.post("/links/999/rearchive")).status_code == 404


async def test_html_forms_get_html_errors(client: httpx.AsyncClient) -> None:
    resp = await client.post(
        "/submit", data={"url": "javascript:alert(1)"}, headers={"accept": "text/html"}
    )
    assert resp.status_code == 400 and "text/html" in resp.headers["content-type"]
    assert "will not be archived" in resp.text
