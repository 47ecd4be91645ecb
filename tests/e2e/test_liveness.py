"""Watching an original end to end, every hop real: a page archived through the forum is
checked by the writer's schedule on the archiver (conditional GET), found edited (captured
again: both captures kept, compared word by word from S3), then found gone (410): the link's
source status, its badge and /gone.xml say so."""

from __future__ import annotations

import pytest

from testkit.httpserver import FixtureServer, Reply
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration

TOKEN = "liveness-e2e-token"
HTML = {"Content-Type": "text/html; charset=utf-8", "ETag": '"v1"'}


def article(when: str) -> bytes:
    paragraphs = "".join(
        f"<p>The council met on Tuesday, item {n}: the harbour wall will be repaired.</p>"
        for n in range(8)
    )
    return (
        "<html><head><title>Harbour news</title></head><body><article><h1>Harbour wall</h1>"
        f"<p>Work starts in {when}.</p>{paragraphs}</article></body></html>"
    ).encode()


@pytest.fixture
def extra_env() -> dict[str, str]:
    return {
        "LIVENESS_SCHEDULE": "3s,1d",
        "LIVENESS_CONFIRM_SECONDS": "0",
        "ADMIN_TOKEN": TOKEN,
        "MEDIA_JOBS_ENABLED": "false",
    }


def source(running: Running, link_id: int) -> dict:  # type: ignore[type-arg]
    return dict(
        running.http.get(f"{running.web}/links/{link_id}.json", timeout=5).json()["source_status"]
    )


def ask(running: Running, link_id: int) -> None:
    resp = running.http.post(f"{running.web}/admin/check", json={"link": str(link_id)},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)  # fmt: skip
    assert resp.status_code == 202, resp.text


def test_an_original_checked_edited_and_gone(
    forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    served = {"page": Reply(article("May"), headers=HTML)}
    outside_web.routes["/news.html"] = lambda _: served["page"]
    forum.add(201, f'<p>The plan: <a href="{outside_web.base}/news.html">news</a></p>')
    link = running.wait_for(lambda: running.archived("/news.html"), 90, "the link archived")
    link_id = int(link["id"])

    # The schedule's first check (3 s after the archive): a conditional GET, not modified.
    first = running.wait_for(
        lambda: source(running, link_id)["observations"], 60, "the first scheduled check"
    )
    assert (first[0]["answer"], first[0]["via"]) == ("present", "http")
    asked = [h for p, h in outside_web.requests if p == "/news.html" and "If-None-Match" in h]
    assert asked and asked[-1]["If-None-Match"] == '"v1"'

    # The page is edited: a check finds it changed, and it is captured again.
    served["page"] = Reply(article("June"), headers={**HTML, "ETag": '"v2"'})
    ask(running, link_id)
    running.wait_for(
        lambda: (
            running.query(
                "SELECT count(*) FROM snapshots s JOIN archive_jobs j ON j.id = s.job_id"
                " WHERE s.link_id = ? AND j.status = 'succeeded'",
                link_id,
            )[0][0]
            == 2
        ),
        90,
        "the edited page captured again",
    )
    status = source(running, link_id)
    assert status["edited"] and status["observations"][0]["changed"] is True
    diff = running.wait_for(
        lambda: running.http.get(f"{running.web}/links/{link_id}/compare.json", timeout=10).json()[
            "diff"
        ],
        30,
        "the two captures' texts compared",
    )
    changes = [(p["op"], p["text"].strip()) for p in diff["pieces"] if p["op"] != "equal"]
    assert changes == [("delete", "May."), ("insert", "June.")]
    assert "Edited after it was posted" in running.http.get(f"{running.web}/links/{link_id}").text

    # The page is deleted: 410, gone at once (LIVENESS_CONFIRM_SECONDS=0), with its evidence.
    served["page"] = Reply(b"gone", 410, {"Content-Type": "text/plain"})
    ask(running, link_id)
    gone = running.wait_for(
        lambda: (s := source(running, link_id))["state"] == "gone" and s, 60, "the link gone"
    )
    assert (gone["reason"], gone["observations"][0]["status"]) == ("HTTP 410", 410)
    feed = running.http.get(f"{running.web}/gone.xml", timeout=5).text
    assert f"/links/{link_id}#source" in feed
    assert "deleted at source on" in running.http.get(f"{running.web}/links/{link_id}").text
    metrics = running.http.get(
        f"http://127.0.0.1:{running.metrics_port('writer')}/metrics", timeout=5
    )
    assert 'dla_writer_liveness_checks_total{answer="gone"} 1.0' in metrics.text
