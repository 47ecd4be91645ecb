"""Media upload: MB/s from a local file to S3 (real SeaweedFS) and the uploader's peak memory.

The media worker uploads each downloaded file with ``ObjectStore.put_file`` (one pass: read
a part, hash it, send it; at most ``UPLOAD_PARTS_IN_FLIGHT`` parts in flight). Baseline: a
plain multipart upload of the same file with boto3's ``upload_file`` (what ``aws s3 cp``
does), measured in the same run against the same SeaweedFS.

Each upload runs in its own fresh process, which reports its wall time and its peak RSS
(``ru_maxrss``) together with its RSS before the upload started, so "added" memory is what
the upload itself cost. Two file sizes show whether memory depends on the size. The files
are created in a temporary folder at bench time and deleted afterwards.

Run: ``.venv/bin/python -m bench.bench_media [--sizes-mb 100,500] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from statistics import median

from bench.report import write_section
from services.supervisor.infra import S3Credentials, start_weed
from shared.s3 import UPLOAD_PARTS_IN_FLIGHT

BUCKET = "bench-media"
CHILD = r"""
import asyncio, json, os, resource, sys, time
from pathlib import Path

def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

mode, path, key = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if mode == "worker":
    from shared.s3 import ObjectStore
    from shared.settings import CommonSettings
    async def main():
        async with ObjectStore(CommonSettings()) as store:
            before = rss_kb()
            t0 = time.perf_counter()
            await store.put_file(key, path, "video/mp4")
            return before, time.perf_counter() - t0
    before, seconds = asyncio.run(main())
elif mode == "transfer":  # the S3 client's transfer manager (bench/compare_s3_upload.py)
    import hashlib
    from boto3.s3.transfer import TransferConfig
    from shared.s3 import PART_SIZE, UPLOAD_PARTS_IN_FLIGHT, ObjectStore
    from shared.settings import CommonSettings

    class Reader:
        def __init__(self, fh):
            self.fh = fh
        async def read(self, n):
            return await asyncio.to_thread(self.fh.read, n)

    async def main():
        async with ObjectStore(CommonSettings()) as store:
            before = rss_kb()
            t0 = time.perf_counter()
            digest = hashlib.sha256()
            def hashed(data):
                digest.update(data)
                return data
            config = TransferConfig(multipart_threshold=PART_SIZE,  # as put_file's
                                    multipart_chunksize=PART_SIZE,
                                    max_concurrency=UPLOAD_PARTS_IN_FLIGHT,
                                    max_io_queue=UPLOAD_PARTS_IN_FLIGHT,  # memory bound
                                    io_chunksize=1 << 20)
            with path.open("rb") as fh:
                await store.client.upload_fileobj(
                    Reader(fh), store.bucket, key, ExtraArgs={"ContentType": "video/mp4"},
                    Config=config, Processing=hashed)
            digest.hexdigest()
            return before, time.perf_counter() - t0
    before, seconds = asyncio.run(main())
else:
    import boto3
    from boto3.s3.transfer import TransferConfig
    from botocore.config import Config
    client = boto3.client(
        "s3", endpoint_url=os.environ["S3_ENDPOINT"], region_name="us-east-1",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    client.list_buckets()
    before = rss_kb()
    t0 = time.perf_counter()
    client.upload_file(str(path), os.environ["S3_BUCKET"], key, Config=TransferConfig())
    seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "before_kb": before, "peak_kb": peak}))
"""


def make_file(path: Path, size_mb: int) -> None:
    """Random bytes (incompressible), written in 8 MiB blocks."""
    block = os.urandom(8 << 20)
    with path.open("wb") as fh:
        for i in range(size_mb // 8):
            fh.write(block[i % 7 :] + block[: i % 7])
        fh.write(block[: (size_mb % 8) << 20])


@contextlib.contextmanager
def s3_env(root: Path) -> Iterator[dict[str, str]]:
    """A SeaweedFS for the run (stopped at the end): the env an upload child needs."""
    creds = S3Credentials("benchkey", "bench-secret-value-0123456789")
    weed = start_weed(root / "s3", BUCKET, creds, root / "weed.log")
    try:
        yield {
            **os.environ,
            "S3_ENDPOINT": weed.endpoint,
            "S3_BUCKET": BUCKET,
            "AWS_ACCESS_KEY_ID": creds.access_key,
            "AWS_SECRET_ACCESS_KEY": creds.secret_key,
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
    finally:
        weed.child.stop()


def upload(mode: str, path: Path, key: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path), key],
        env=env, capture_output=True, text=True, check=True, timeout=1800,
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure(
    modes: tuple[str, ...], sizes: list[int], rounds: int
) -> dict[tuple[int, str], tuple[float, float, float]]:
    """(size, mode) -> (median seconds, peak RSS MB, MB added by the upload), each upload
    in a fresh process on one SeaweedFS, the modes alternated within each round."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-media-") as tmp, s3_env(Path(tmp)) as env:
        for size in sizes:
            path = Path(tmp) / f"{size}.bin"
            make_file(path, size)
            runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
            for r in range(rounds):
                for mode in modes:
                    res = upload(mode, path, f"bench/{mode}/{size}/{r}.bin", env)
                    runs[mode].append(res)
                    print(mode, size, res, flush=True)
            path.unlink()
            for mode, results in runs.items():
                out[(size, mode)] = (
                    median(x["seconds"] for x in results),
                    max(x["peak_kb"] for x in results) / 1024,
                    max(x["peak_kb"] - x["before_kb"] for x in results) / 1024,
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes-mb", default="100,500")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes_mb.split(",")]
    rows = [(size, mode, size / sec, sec, peak, added)
            for (size, mode), (sec, peak, added) in measure(("worker", "boto3"), sizes,
                                                            args.rounds).items()]  # fmt: skip
    by = {(s, m): (mbps, sec, peak, added) for s, m, mbps, sec, peak, added in rows}
    lines = [
        "| file | uploader | MB/s (median) | seconds | peak RSS MB | added by the upload MB |",
        "|---|---|---|---|---|---|",
    ]
    for s, m, mbps, sec, peak, added in rows:
        name = "worker `put_file`" if m == "worker" else "boto3 `upload_file`"
        lines.append(f"| {s} MB | {name} | {mbps:.0f} | {sec:.2f} | {peak:.0f} | {added:.0f} |")
    ratios = [by[(s, "boto3")][0] / by[(s, "worker")][0] for s in sizes]
    added_mb = [by[(s, "worker")][3] for s in sizes]
    body = (
        "Upload of a local file to SeaweedFS on 127.0.0.1, each run a fresh process "
        f"({args.rounds} rounds per size; random bytes). The media worker uploads with "
        "`ObjectStore.put_file` (8 MiB parts, hashed while read, "
        f"{UPLOAD_PARTS_IN_FLIGHT} in flight); the baseline "
        "is boto3's `upload_file` with its default TransferConfig (8 MiB parts, 10 threads), "
        "the `aws s3 cp` way.\n\n"
        + "\n".join(lines)
        + "\n\n"
        + "boto3 / worker throughput: "
        + ", ".join(f"{s} MB: {r:.2f}x" for s, r in zip(sizes, ratios, strict=True))
        + " (target: within 2x). Memory the worker's upload added: "
        + ", ".join(f"{s} MB file: {a:.0f} MB" for s, a in zip(sizes, added_mb, strict=True))
        + " (target: flat, independent of the file size).\n"
    )
    print(body)
    write_section("Media upload to S3", "make bench (bench/bench_media.py)", body)


if __name__ == "__main__":
    main()
