"""kill -9 of each service at random moments while a fixture forum's links are archived:
afterwards every post, link, occurrence, job and artifact is present exactly once and every
job has ended. `make test`: CHAOS_LINKS=12, CHAOS_KILLS=5; `make chaos`: 200 links, 20 kills.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from services.supervisor.stack import SERVICES
from testkit.chaos import Run, accounting, count, fault_env, record, site, summary

pytestmark = pytest.mark.integration


@pytest.mark.timeout(300 + 4 * count("CHAOS_LINKS", 12) + 30 * count("CHAOS_KILLS", 5))
def test_kill9_of_each_service_loses_and_doubles_nothing(tmp_path: Path) -> None:
    links = count("CHAOS_LINKS", 12)
    kills = count("CHAOS_KILLS", 5)
    seed = count("CHAOS_SEED", int(time.time()))  # in the figures: CHAOS_SEED=... replays a run
    rng = random.Random(seed)
    posts = max(1, links // 2)
    with site(links_per_post=2) as s:
        # Posts appear over the first part of the run, in bursts larger than the feed page.
        window = max(20.0, links * 0.4)
        bursts = max(1, min(posts, kills + 2))
        burst_at = sorted(rng.uniform(0, window * 0.8) for _ in range(bursts))
        sizes = [posts // bursts + (1 if i < posts % bursts else 0) for i in range(bursts)]
        victims = [SERVICES[i % len(SERVICES)] for i in range(kills)]
        rng.shuffle(victims)
        kill_at = sorted(rng.uniform(1, window) for _ in range(kills))
        recoveries: dict[str, list[float]] = {name: [] for name in SERVICES}
        never: list[str] = []
        with Run(tmp_path / "data", fault_env(s)) as run:
            started = time.monotonic()
            events = sorted([(t, "post", n) for t, n in zip(burst_at, sizes, strict=True)] + [
                (t, "kill", v) for t, v in zip(kill_at, victims, strict=True)
            ], key=lambda e: e[0])  # fmt: skip
            for at, what, arg in events:
                time.sleep(max(0.0, started + at - time.monotonic()))
                if what == "post":
                    s.add_posts(int(arg))
                    continue
                service = str(arg)
                old = run.pid(service)
                run.kill9(service)
                took = run.recovered(service, old)
                if took is None:
                    never.append(service)
                else:
                    recoveries[service].append(took)
            settled = run.wait(lambda: run.settled(links), timeout=240 + links)
            elapsed = time.monotonic() - started
            figures = accounting(run, s)
            logs = "" if settled else run.tail_logs()
    all_recoveries = [x for xs in recoveries.values() for x in xs]
    record(
        "kill9",
        {
            "seed": seed,
            "links": links,
            "posts": posts,
            "kills": dict(sorted((v, victims.count(v)) for v in set(victims))),
            "recovery": summary(all_recoveries),
            "recovery_by_service": {k: summary(v) for k, v in recoveries.items() if v},
            "never_recovered": never,
            "settled": settled,
            "run_s": round(elapsed, 1),
            **figures,
        },
    )
    assert not never, f"services that did not come back: {never}"
    assert settled, f"the archive did not settle: {figures}\n{logs}"
    assert all(v == 0 for v in figures["lost"].values()), figures
    assert all(v == 0 for v in figures["duplicated"].values()), figures
    assert all(v == 0 for v in figures["extra"].values()), figures
