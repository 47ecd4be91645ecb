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

from bench.bench_media import measure

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
    sizes = [int(s) for s in args.sizes_mb.split(",")]
    for (size, mode), (seconds, _, added) in measure(tuple(MODES), sizes, args.rounds).items():
        lines.append(
            f"| {size} MB | {MODES[mode]} | {size / seconds:.0f} | {seconds:.2f} | {added:.0f} |"
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
