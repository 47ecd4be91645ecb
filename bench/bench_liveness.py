"""Benchmark of watching the originals (issue 24): the due-check query over N links, the
database's growth per observation, one archiver's checks per second against a local fixture
host, and the word diff of two 50,000-word captures.

    .venv/bin/python -m bench.bench_liveness [--links 1000000] [--observations 1000000]
        [--checks 3000] [--concurrency 8] [--runs 20] [--no-docs]

- Scheduling: a database of N watched links (the real migrations; links and schedule rows
  inserted in bulk, their due times spread over 90 days, 1 % due now). The due query is the
  dispatcher's own (`dispatch.DUE`, a range of the `due` index); a dispatcher run
  (`dispatch.plan`: the query, the per-domain counts, the limits, recording the checks) is
  timed too. Targets: the due query <= 50 ms.
- Growth: `--observations` check results applied through the writer's real apply path
  (batches of 1,000, as the writer does), spread over the links, mixed answers (70 % present,
  20 % unknown with a rate-limit or 5xx, 10 % gone by a 404 or a platform's words); the file's
  growth (after a checkpoint) divided by the observations. Target: <= 100 bytes.
- Throughput: one checker (`shared/capture/checker.py`, LIVENESS_CONCURRENCY checks at once)
  with real NATS and SeaweedFS, against a fixture host in another process that answers the
  conditional GET with 304 nine times in ten and the same page otherwise (compared by its
  sha256); per-host limits do not apply (the writer holds them). Target: >= 50 checks/s.
- Diff: two captures of a 50,000-word text (paragraphs, with 1 % of words edited and two
  paragraphs moved), with `shared.content.worddiff.word_diff`; also a text without
  paragraph breaks and a whole rewrite. Target: <= 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import multiprocessing
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.report import write_section
from services.supervisor.infra import S3Credentials, start_nats, start_weed
from services.writer.apply import Item, apply_batch
from services.writer.db import open_db
from services.writer.job_policy import Policy
from services.writer.liveness import dispatch
from services.writer.liveness.budget import HostBudget
from services.writer.liveness.rules import LivenessRules
from shared import bus
from shared.capture.checker import CheckerConfig, run_checker
from shared.content.worddiff import word_diff
from shared.liveness.check import CheckEnv, Checker
from shared.messages import LivenessCheck, LivenessResult
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import CHECK_RESULT, CHECKER_JOBS, JOB_CHECK

TITLE = "Watching the originals"
PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
DOMAINS = 5_000


def build(path: Path, n: int) -> None:
    """N watched links in bulk (their schedule due over 90 days, 1 % due now)."""
    conn = open_db(path)
    rng = random.Random(3)
    t = int(NOW.timestamp())
    stamp = "2026-01-01T00:00:00.000000Z"
    with conn:
        conn.executemany(
            "INSERT INTO links (id, original_url, normalized_url, canonical_url, domain,"
            " first_seen_at, last_seen_at, last_archived_at, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'archived')",
            (
                (i, u, u, u, f"site{i % DOMAINS}.example", stamp, stamp, stamp)
                for i in range(1, n + 1)
                for u in (f"https://site{i % DOMAINS}.example/p/{i}",)
            ),
        )
        conn.executemany(
            "INSERT INTO liveness_schedule (link_id, base, due) VALUES (?, ?, ?)",
            (
                (
                    i,
                    t - 86400 * 30,
                    t - rng.randrange(3600) if i % 100 == 0 else t + rng.randrange(90 * 86400),
                )
                for i in range(1, n + 1)
            ),
        )
    conn.close()


def scheduling(path: Path, runs: int) -> tuple[list[float], list[float]]:
    """(due query ms, dispatcher run ms), `runs` of each."""
    conn = open_db(path)
    t = int(NOW.timestamp())
    query, plans = [], []
    rules = LivenessRules(concurrency=8, per_domain=1, host_per_hour=0)
    for _ in range(runs):
        started = time.perf_counter()
        conn.execute(dispatch.DUE, (t, 8 * dispatch.SCAN + 16)).fetchall()
        query.append((time.perf_counter() - started) * 1000)
    for _ in range(runs):
        started = time.perf_counter()
        checks = dispatch.plan(conn, rules, HostBudget(0), NOW)
        plans.append((time.perf_counter() - started) * 1000)
        with conn:  # back to idle, due now again: every run dispatches eight
            conn.executemany(
                "UPDATE liveness_schedule SET state = 0, due = ? WHERE link_id = ?",
                [(t - 1, c.link_id) for c in checks],
            )
    conn.close()
    return query, plans


ANSWERS = [
    ("present", {"status": 200, "reason": "ok"}),
    ("present", {"status": 304, "reason": "not_modified", "changed": False}),
    ("unknown", {"status": 429, "reason": "rate_limited", "words": "Too Many Requests"}),
    ("unknown", {"status": 503, "reason": "http_5xx", "words": "Service Unavailable"}),
    ("gone", {"status": 404, "reason": "not_found"}),
    ("gone", {"status": 200, "reason": "removed", "tombstone": True,
              "via": "reddit:thread-json", "words": "removed (moderator)"}),
]  # fmt: skip
WEIGHTS = [40, 30, 12, 8, 6, 4]


def growth(path: Path, n_links: int, n_obs: int) -> float:
    """Bytes the database grew per observation applied through the writer's apply path."""
    conn = open_db(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = path.stat().st_size
    rng = random.Random(5)
    policy = Policy()
    batch: list[Item[None]] = []
    for k in range(n_obs):
        answer, fields = rng.choices(ANSWERS, WEIGHTS)[0]
        link = rng.randrange(1, n_links + 1)
        at = NOW + timedelta(seconds=k)
        result = LivenessResult(link_id=link, seq=k + 1, checked_at=at, answer=answer,  # type: ignore[arg-type]
                                worker="bench:1", **({"via": "http"} | fields))  # fmt: skip
        batch.append(Item(CHECK_RESULT, result, None))
        if len(batch) == 1000:
            apply_batch(conn, policy, batch, at)
            batch = []
    if batch:
        apply_batch(conn, policy, batch, NOW + timedelta(seconds=n_obs))
    conn.execute("DELETE FROM processed_messages")  # pruned by the writer after 30 days
    conn.commit()
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    after = path.stat().st_size
    conn.close()
    return (after - before) / n_obs


PAGE = (
    b"<html><head><title>A page</title></head><body><article>"
    + b"<p>Words of an ordinary page, repeated to a typical size.</p>" * 200
    + b"</article></body></html>"
)


def fixture_host(port_out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """The site checked, in a process of its own: 304 to nine conditional GETs in ten."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    count = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            count[0] += 1
            if self.headers.get("If-None-Match") == '"v1"' and count[0] % 10:
                self.send_response(304)
                self.send_header("ETag", '"v1"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("ETag", '"v1"')
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
    port_out.put(server.server_address[1])
    server.serve_forever()


async def throughput(root: Path, n_checks: int, concurrency: int) -> float:
    """Checks per second of one checker with real NATS and S3 against the fixture host."""
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    host = multiprocessing.Process(target=fixture_host, args=(ports,), daemon=True)
    host.start()
    nats = start_nats(root / "nats", root / "nats.log")
    creds = S3Credentials("benchkey", "bench-secret-0123456789")
    weed = start_weed(root / "s3", "bench-liveness", creds, root / "weed.log")
    settings = CommonSettings(s3_endpoint=weed.endpoint, s3_bucket="bench-liveness",
                              aws_access_key_id=creds.access_key,
                              aws_secret_access_key=creds.secret_key)  # type: ignore[call-arg]  # fmt: skip
    try:
        base = f"http://127.0.0.2:{ports.get(timeout=10)}"
        nc = await bus.connect(nats.url, "bench-liveness")
        js = nc.jetstream()
        await bus.ensure_streams(js)
        async with ObjectStore(settings) as store:
            await store.ensure_bucket()
            headers = b'{"status": 200, "headers": [["ETag", "\\"v1\\""]]}'
            await store.put_bytes("b/headers.json", headers, "application/json")
            await store.put_bytes("b/body.html", PAGE, "text/html")
            digest = hashlib.sha256(PAGE).hexdigest()
            deadline = NOW + timedelta(days=1)
            for i in range(n_checks):
                job = LivenessCheck(link_id=i + 1, seq=1, url=f"{base}/p/{i}", snapshot_id="b",
                                    headers_key="b/headers.json", raw_key="b/body.html",
                                    raw_sha256=digest, deadline=deadline)  # fmt: skip
                await bus.publish(js, JOB_CHECK, job)
            results = await js.subscribe(CHECK_RESULT, ordered_consumer=True)
            env = {"ALLOW_PRIVATE_TARGETS": "true"}
            checker = Checker(CheckEnv(PLUGINS, env, "bench:1"), store)
            cfg = CheckerConfig(CHECKER_JOBS, concurrency, 1.0)
            stop = asyncio.Event()
            started = time.perf_counter()
            task = asyncio.create_task(run_checker(cfg, js, checker, stop))
            answers: dict[str, int] = {}
            for _ in range(n_checks):
                msg = await results.next_msg(timeout=60)
                answer = LivenessResult.model_validate_json(msg.data).answer
                answers[answer] = answers.get(answer, 0) + 1
            elapsed = time.perf_counter() - started
            stop.set()
            await task
            assert answers == {"present": n_checks}, answers
        await nc.close()
        return n_checks / elapsed
    finally:
        host.kill()
        weed.child.stop()
        nats.child.stop()


def diff_times(runs: int) -> dict[str, float]:
    """Median milliseconds of word_diff on two 50,000-word captures, three ways."""
    rng = random.Random(11)
    vocab = [f"w{n}" for n in range(8000)] + ["東京", "Президент", "مرحبا"]
    words = [rng.choice(vocab) for _ in range(50_000)]
    paragraphs = [" ".join(words[i : i + 60]) for i in range(0, len(words), 60)]
    edited = [p.split() for p in paragraphs]
    for _ in range(500):  # 1 % of the words
        para = rng.randrange(len(edited))
        edited[para][rng.randrange(len(edited[para]))] = rng.choice(vocab)
    moved = [" ".join(p) for p in edited]
    moved.insert(200, moved.pop(700))
    moved.insert(500, moved.pop(20))
    cases = {
        "1 % edited, 2 paragraphs moved": ("\n\n".join(paragraphs), "\n\n".join(moved)),
        "no paragraph breaks, 1 % edited": (" ".join(paragraphs), " ".join(moved)),
        "a whole rewrite": (" ".join(words), " ".join(reversed(words))),
    }
    out = {}
    for name, (old, new) in cases.items():
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            word_diff(old, new)
            times.append((time.perf_counter() - started) * 1000)
        out[name] = statistics.median(times)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--observations", type=int, default=1_000_000)
    parser.add_argument("--checks", type=int, default=3_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-liveness-") as tmp:
        root = Path(tmp)
        db = root / "archive.sqlite3"
        started = time.perf_counter()
        build(db, args.links)
        print(f"built {args.links} watched links in {time.perf_counter() - started:.0f} s")
        query, plans = scheduling(db, args.runs)
        per_obs = growth(db, args.links, args.observations)
        rate = asyncio.run(throughput(root, args.checks, args.concurrency))
    diffs = diff_times(max(3, args.runs // 4))
    rows = [
        ("due-check query (`dispatch.DUE`), p50 / p95",
         f"{statistics.median(query):.2f} / {pct(query, 0.95):.2f} ms", "<= 50 ms"),
        ("dispatcher run (`dispatch.plan`, 8 checks), p50 / p95",
         f"{statistics.median(plans):.2f} / {pct(plans, 0.95):.2f} ms", ""),
        (f"database growth per observation ({args.observations:,} applied)",
         f"{per_obs:.1f} bytes", "<= 100 bytes"),
        (f"one checker, {args.concurrency} at once ({args.checks:,} checks)",
         f"{rate:.0f} checks/s", ">= 50 checks/s"),
        *((f"word diff of two 50,000-word captures: {name}", f"{ms:.0f} ms", "<= 200 ms")
          for name, ms in diffs.items()),
    ]  # fmt: skip
    body = (
        f"{args.links:,} watched links ({DOMAINS:,} domains, 1 % due).\n\n"
        "| measure | result | target |\n| --- | --- | --- |\n"
        + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    )
    print(body)
    if not args.no_docs:
        command = "python -m bench.bench_liveness" + (
            f" --links {args.links} --observations {args.observations} --checks {args.checks}"
        )
        write_section(TITLE, command, body)


if __name__ == "__main__":
    main()
