"""Where a page's CPU goes inside the browser: each step of a capture, by kind of process.

    .venv/bin/python -m bench.bench_browser_steps [--pages 20]

The 60-page bench site (../shared/bench/gen_site.py, skipped cleanly when absent) is served
on 127.0.0.1; one page at a time is captured through the archiver's own browser broker
(services.archiver.browser: its Chromium, flags and Node driver) in a context set up as a
snapshot's is (viewport, service workers blocked, the lazy and settle watchers), with the
steps the capture hooks ask for: a new page, navigate (until `load`), the 0.3 s after the
load event (the settle step's quiet time), the full-page screenshot with the screenshot
operation's own CDP parameters (services.archiver.pageops.screenshot_params), the PDF, the
DOM, closing the page and its context. For each step it prints the CPU-s a page spent by
kind of process: the browser process, the GPU process, the renderers (a closed renderer's
CPU is its zygote's, so they are one column), Chromium's utility processes, Playwright's
Node driver and this process; and the minor page faults of the screenshot by kind.
Without the egress proxy, the hooks or S3: bench_stack's "CPU-s a page by kind of process"
has those. Prints only; readings go into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import math
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.bench_capture import GEN_SITE, make_site, serve_site
from bench.bench_stack import process_label
from services.archiver import lazywatch, settlewatch
from services.archiver.browser import BrowserBroker, BrowserLimits
from services.archiver.pageops import screenshot_params
from services.archiver.pagesession import PageOptions
from shared import processes
from shared.capture.settings import REPO_PLUGINS
from shared.hooks.config import load_plugin_config

TICKS = os.sysconf("SC_CLK_TCK")
STEPS = ("new page", "navigate", "after load", "screenshot", "pdf", "dom", "close")
SCREENSHOT_MAX_HEIGHT = int(
    load_plugin_config(REPO_PLUGINS / "screenshot").values({})["SCREENSHOT_MAX_HEIGHT"]
)
"""The screenshot plugin's default height cap, from its config.json."""


def kind(pid: int) -> str:
    """The column a process's CPU goes into."""
    label = process_label(pid)
    if pid == os.getpid():
        return "this process"
    if label.endswith(("renderer", "zygote")):
        return "renderers"
    name, _, ptype = label.partition(" ")
    if name.startswith("chromium"):  # the full browser or its headless shell
        return ptype or "browser"
    return {"?": "other"}.get(label, label)


SITE_SERVER: list[int] = []
"""The site server's pid (not counted)."""


def reading() -> tuple[Counter[str], Counter[str]]:
    """CPU ticks (reaped children included) and minor faults so far, by kind of process."""
    cpu: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for pid in processes.descendants(os.getpid()):
        if pid in SITE_SERVER:
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            f = stat[stat.rfind(b")") + 2 :].split()
            name = kind(pid)
            cpu[name] += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
            faults[name] += int(f[7]) + int(f[8])
    return cpu, faults


async def capture(broker: BrowserBroker, url: str, pdf: Path, spent: dict[str, Counter[str]],
                  faults: Counter[str]) -> None:  # fmt: skip
    """One page through every step, each step's CPU added to `spent`."""
    last, last_faults = reading()

    def step(name: str) -> None:
        nonlocal last, last_faults
        now, now_faults = reading()
        spent[name].update(now - last)
        if name == "screenshot":
            faults.update(now_faults - last_faults)
        last, last_faults = now, now_faults

    options = PageOptions(user_agent="bench")
    viewport = {"width": options.viewport_width, "height": options.viewport_height}
    async with broker.context(viewport=viewport, service_workers="block") as ctx:
        await ctx.add_init_script(lazywatch.WATCH_JS + "\n" + settlewatch.WATCH_JS)
        page = await ctx.new_page()
        step("new page")
        await page.goto(url, wait_until="load")
        step("navigate")
        await asyncio.sleep(0.3)
        step("after load")
        cdp = await ctx.new_cdp_session(page)
        metrics = await cdp.send("Page.getLayoutMetrics")
        width = int(metrics["cssLayoutViewport"]["clientWidth"])
        height = min(SCREENSHOT_MAX_HEIGHT, math.ceil(metrics["cssContentSize"]["height"]))
        shot = await cdp.send("Page.captureScreenshot", screenshot_params(width, height, True))
        base64.b64decode(shot["data"])
        step("screenshot")
        await page.pdf(path=pdf, print_background=True)
        step("pdf")
        await page.content()
        step("dom")
        await page.close()
    await asyncio.sleep(0.2)  # the renderer's exit, reaped by its zygote
    step("close")


async def run(pages: int, urls: list[str], work: Path) -> None:
    spent: dict[str, Counter[str]] = {name: Counter() for name in STEPS}
    faults: Counter[str] = Counter()
    async with BrowserBroker(BrowserLimits()) as broker:
        async with broker.context() as warm:  # the browser's start is not counted
            await (await warm.new_page()).goto(urls[0])
        await asyncio.sleep(1)
        for i in range(pages):
            await capture(broker, urls[i % len(urls)], work / "page.pdf", spent, faults)
    kinds = sorted({k for c in spent.values() for k, v in c.items() if v})
    per_page = pages * TICKS
    print(f"CPU-s a page by step and kind of process ({pages} pages, one at a time):\n")
    print("| step | " + " | ".join(kinds) + " | all |")
    print("|---" * (len(kinds) + 2) + "|")
    total: Counter[str] = Counter()
    for name in STEPS:
        total.update(spent[name])
        cells = " | ".join(f"{spent[name][k] / per_page:.3f}" for k in kinds)
        print(f"| {name} | {cells} | {sum(spent[name][k] for k in kinds) / per_page:.3f} |")
    cells = " | ".join(f"{total[k] / per_page:.3f}" for k in kinds)
    print(f"| **all** | {cells} | {sum(total[k] for k in kinds) / per_page:.3f} |")
    shown = ", ".join(f"{k} {v / pages:,.0f}" for k, v in faults.most_common() if v > 0)
    print(f"\nMinor page faults a screenshot, by kind of process: {shown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()
    if not GEN_SITE.exists():
        print(f"skipped: {GEN_SITE} is absent")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base, urls, _ = make_site(work)
        server = serve_site(work / "site", int(base.rsplit(":", 1)[1]))
        SITE_SERVER.append(server.pid)
        try:
            started = time.monotonic()
            asyncio.run(run(args.pages, urls, work))
            print(f"\n({time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.1f})")
        finally:
            server.kill()
            server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
