"""`dla verify`: which of a link's files a manifest entry names."""

from __future__ import annotations

from services.supervisor.cli.evidence_check import artifact_urls


def test_a_retried_hooks_file_is_told_from_the_earlier_by_its_sha256() -> None:
    """A re-run hook's file has the plugin and path of the earlier attempt's (issue 32):
    each manifest finds its own by the sha256 it lists."""
    files = [
        {"plugin": "fetch", "path": "body.html", "sha256": sha, "url": f"/artifacts/{n}",
         "snapshot_id": "s1"}
        for n, sha in ((1, "a" * 64), (2, "b" * 64))
    ] + [{"plugin": "fetch", "path": "body.html", "sha256": "c" * 64, "url": "/artifacts/3",
          "snapshot_id": "s0"}]  # fmt: skip
    urls = artifact_urls({"artifacts": files}, "s1")
    assert urls == {
        ("fetch", "body.html", "a" * 64): "/artifacts/1",
        ("fetch", "body.html", "b" * 64): "/artifacts/2",
    }
