"""`make bench`: runs every benchmark in turn; each writes its section of docs/benchmarks.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHES = [
    "bench_links",
    "bench_extraction",
    "bench_runner",
    "bench_writer",
    "bench_e2e",
    "bench_first_link",
    "bench_hostile",
    "bench_web",
    "bench_media",
    "bench_capture",
    "bench_stack",
    "bench_platforms",
    "bench_evidence",
    "bench_liveness",
]


def main() -> int:
    here = Path(__file__).resolve().parent
    failed = []
    for name in BENCHES:
        if not (here / f"{name}.py").exists():
            print(f"== {name}: not present, skipped")
            continue
        print(f"== {name}", flush=True)
        rc = subprocess.call([sys.executable, "-m", f"bench.{name}"], cwd=here.parent)
        if rc:
            failed.append(name)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
