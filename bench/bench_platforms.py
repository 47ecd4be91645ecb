"""Benchmark of the platform plugins: time from a job's hook start to its Post record, per
platform, against the local stand-ins (testkit.platform_server), images stored.

    .venv/bin/python -m bench.bench_platforms [--runs 20] [--no-docs]

Each run is a snapshot through the real runner (`run_snapshot`, the hook forked from the
pre-warmed host, as on an archiver) of one platform plugin's API hook on a fictional post
of that platform; the clock starts when the runner reports the hook `started` and stops
when the observer receives the hook's Post record, which the hook prints once the chain
found the post and its images are stored (downloaded through shared.fetching, hashed).
The NATS hop from the runner to the writer (sub-millisecond on one machine) is left out.
yt-dlp steps are left out (they would ask the real platforms; `<PLATFORM>_STEPS`). Target:
median <= 1.5 s for an API step with its images stored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from shared.hooks.host import close_shared_host
from shared.hooks.records import ArchiveResultRecord, HookRecord, PostRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, run_snapshot
from shared.platforms.chains import PLATFORMS
from testkit.bluesky_data import BSKY_RKEYS
from testkit.mastodon_data import status_url
from testkit.platform_data import X_IDS
from testkit.platform_pages import TIKTOK_IDS
from testkit.platform_server import PLUGINS, PlatformServer

TITLE = "Platform posts"
TARGET_S = 1.5
CASES = {
    "x": (f"https://x.com/ada_example/status/{X_IDS['four_images']}", 4),
    "bluesky": (f"https://bsky.app/profile/ada.example.social/post/{BSKY_RKEYS['four_images']}", 4),
    "tiktok": (f"https://www.tiktok.com/@ada.example/photo/{TIKTOK_IDS['photo']}", 3),
    "instagram": ("https://www.instagram.com/p/Cexample01/", 1),
    "facebook": ("https://www.facebook.com/examplepage/posts/1234567", 1),
    "telegram": ("https://t.me/examplechannel/77", 1),
    "imgur": ("https://imgur.com/gallery/abcde12", 1),
    "streamable": ("https://streamable.com/abc12", 1),
    "mastodon": (status_url("two_images"), 2),
}
"""Platform -> (link, images its post has)."""


class Clock:
    """Observer: when the hook started, when its Post record arrived."""

    def __init__(self) -> None:
        self.started = 0.0
        self.post_at = 0.0
        self.images = 0

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        now = time.perf_counter()
        if isinstance(record, ArchiveResultRecord) and record.status == "started":
            self.started = now
        elif isinstance(record, PostRecord):
            self.post_at = now
            self.images = sum(1 for m in record.post.media if m.file)

    async def hook_finished(self, hook: HookSpec, result: ArchiveResultRecord, out: Path) -> None:
        assert result.status == "succeeded", result


async def one(plugin: str, url: str, server: PlatformServer, work: Path, n: int) -> Clock:
    steps = ",".join(name for name, _ in PLATFORMS[plugin].chain if name != "yt-dlp")
    env = {**os.environ, **server.bases(), "ALLOW_PRIVATE_TARGETS": "true",
           f"{plugin.upper()}_STEPS": steps}  # fmt: skip
    clock = Clock()
    spec = SnapshotSpec(
        snapshot_id=f"b{n}", url=url, out_dir=work / f"{plugin}-{n}", plugins_dirs=[PLUGINS],
        env=env, only_hooks=[f"{plugin}/on_Snapshot__15_{plugin}.py"],
    )  # fmt: skip
    await run_snapshot(spec, clock, kill_grace=5)
    return clock


async def measure(runs: int) -> dict[str, tuple[float, float, int]]:
    """Platform -> (median s, p90 s, images stored)."""
    out: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp, PlatformServer() as server:
        work = Path(tmp)
        try:
            for plugin, (url, images) in CASES.items():
                await one(plugin, url, server, work, -1)  # warm the host's imports
                took = []
                for n in range(runs):
                    clock = await one(plugin, url, server, work, n)
                    assert clock.post_at and clock.images == images, (plugin, clock.images)
                    took.append(clock.post_at - clock.started)
                took.sort()
                out[plugin] = (statistics.median(took), took[int(0.9 * (len(took) - 1))], images)
                print(f"{plugin:11} median {out[plugin][0]:.3f} s  p90 {out[plugin][1]:.3f} s")
        finally:
            close_shared_host()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    results = asyncio.run(measure(args.runs))
    rows = "\n".join(
        f"| {p} | {CASES[p][0].split('/')[2]} | {images} | {med:.3f} | {p90:.3f} |"
        f" {'yes' if med <= TARGET_S else 'NO'} |"
        for p, (med, p90, images) in results.items()
    )
    body = (
        f"Time from a platform hook's start to its Post record (the chain's API step, the "
        f"post's images downloaded and hashed), {args.runs} runs each against the local "
        f"stand-ins, the hook forked from the warm host (see bench/bench_platforms.py). "
        f"Target: median <= {TARGET_S} s.\n\n"
        "| platform | link host | images stored | median (s) | p90 (s) | within target |\n"
        "|---|---|---|---|---|---|\n" + rows
    )
    if not args.no_docs:
        write_section(TITLE, f"python -m bench.bench_platforms --runs {args.runs}", body)


if __name__ == "__main__":
    main()
