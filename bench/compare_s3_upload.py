"""Hand-written multipart upload against the S3 client's transfer manager, side by side.

`ObjectStore.put_file` (shared/s3.py) reads a part, hashes it and sends it, at most
`UPLOAD_PARTS_IN_FLIGHT` parts in flight. The candidate is aioboto3's `upload_fileobj` (the
managed transfer of the async client the store already uses) with the same part size and
concurrency, reading in a thread and hashing each part in its `Processing` hook: the same
one pass, no code of ours for parts, retries of the create/complete calls or aborting.
Each upload runs in a fresh process on real SeaweedFS (bench/bench_media.py's child), so
wall time and the memory the upload added are its own.

The decision (docs/architecture.md, "Libraries and plumbing") is: replace `put_file`'s
multipart code with the transfer manager if it meets put_file's figures in
docs/benchmarks.md ("Media upload to S3": throughput, and memory flat whatever the size).

Run: ``.venv/bin/python -m bench.compare_s3_upload [--sizes-mb 100,500] [--rounds 3]``
(prints the table; writes nothing).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from statistics import median

from bench.bench_media import BUCKET, make_file, upload
from services.supervisor.infra import S3Credentials, start_weed

MODES = {"worker": "`ObjectStore.put_file`", "transfer": "aioboto3 `upload_fileobj`"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes-mb", default="100,500")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lines = [
        "| file | uploader | MB/s (median) | seconds | added by the upload MB (max) |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="compare-s3-") as tmp:
        root = Path(tmp)
        creds = S3Credentials("benchkey", "bench-secret-value-0123456789")
        weed = start_weed(root / "s3", BUCKET, creds, root / "weed.log")
        env = {
            **os.environ,
            "S3_ENDPOINT": weed.endpoint,
            "S3_BUCKET": BUCKET,
            "AWS_ACCESS_KEY_ID": creds.access_key,
            "AWS_SECRET_ACCESS_KEY": creds.secret_key,
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        try:
            for size in (int(s) for s in args.sizes_mb.split(",")):
                path = root / f"{size}.bin"
                make_file(path, size)
                runs: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
                for r in range(args.rounds):
                    for mode in MODES:  # alternated, so drift in load hits both
                        res = upload(mode, path, f"compare/{mode}/{size}/{r}.bin", env)
                        runs[mode].append(res)
                        print(mode, size, res, flush=True)
                path.unlink()
                for mode, results in runs.items():
                    seconds = median(x["seconds"] for x in results)
                    added = max(x["peak_kb"] - x["before_kb"] for x in results) / 1024
                    lines.append(
                        f"| {size} MB | {MODES[mode]} | {size / seconds:.0f} | {seconds:.2f}"
                        f" | {added:.0f} |"
                    )
        finally:
            weed.child.stop()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
