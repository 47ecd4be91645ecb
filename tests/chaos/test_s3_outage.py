"""S3 unavailable mid-run (60 s in `make chaos`, CHAOS_S3_DOWN_S): uploads are retried (jobs
nak'ed and redelivered), nothing is lost or half-recorded, every job ends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from testkit.chaos import Run, accounting, count, fault_env, heavy, record, site

pytestmark = [pytest.mark.integration, heavy]


@pytest.mark.timeout(420 + count("CHAOS_S3_DOWN_S", 8))
def test_s3_outage_mid_run_loses_nothing(tmp_path: Path) -> None:
    links = count("CHAOS_S3_LINKS", 16)
    down_s = count("CHAOS_S3_DOWN_S", 8)
    posts = links // 2
    with site(links_per_post=2) as s, Run(tmp_path / "data", fault_env(s)) as run:
        s.add_posts(posts // 2)
        assert run.wait(lambda: len(run.query("SELECT id FROM archive_artifacts")) > 0, 120)
        run.paused.set()  # `dla up` would restart it: this outage is on purpose
        run.stack.stop_s3()
        s.add_posts(posts - posts // 2)
        time.sleep(min(2.0, down_s / 2))  # records of uploads done before the stop land
        during = len(run.query("SELECT id FROM archive_artifacts"))
        time.sleep(down_s - min(2.0, down_s / 2))
        stuck = len(run.query("SELECT id FROM archive_artifacts")) - during
        back_at = time.monotonic()
        run.stack.start_s3_again()
        run.paused.clear()
        settled = run.wait(lambda: run.settled(links), 300)
        catch_up_s = time.monotonic() - back_at
        figures = accounting(run, s)
        half = run.query(
            "SELECT count(*) FROM archive_jobs j JOIN snapshots s ON s.job_id = j.id"
            " WHERE j.status = 'succeeded' AND NOT EXISTS (SELECT 1 FROM archive_artifacts a"
            " WHERE a.link_id = j.link_id AND a.kind = 'raw_response')"
        )[0][0]
        logs = "" if settled else run.tail_logs()
    record(
        "s3_outage",
        {
            "links": links,
            "down_s": down_s,
            "artifacts_recorded_while_down": stuck,
            "catch_up_s": round(catch_up_s, 1),
            "succeeded_without_artifact": half,
            "settled": settled,
            **figures,
        },
    )
    assert settled, f"{figures}\n{logs}"
    assert stuck == 0, "no artifact is recorded while S3 is down"
    assert half == 0
    assert all(v == 0 for v in figures["lost"].values()), figures
    assert all(v == 0 for v in figures["duplicated"].values()), figures
