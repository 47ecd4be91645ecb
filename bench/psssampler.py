"""The summed PSS of everything a benchmark started, sampled in a thread, and its peak.

Used by bench_hostile and bench_stack: every descendant of the bench process (engines,
services, the hook host and its hooks, Playwright's driver, Chromium) is read from the kernel
every 0.25 s; the sample with the largest sum is kept with its parts (Chromium's renderers,
the rest of Chromium, everything else) and the processes that held the most of it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from services.archiver.renderers import is_renderer
from shared import processes as proctree

TOP_KIB = 8 * 1024
"""Processes this large at the peak are named in the report."""
PARTS = ("renderers", "chromium", "rest")


def part_of(pid: int) -> str:
    """Which part of the stack a process is: Chromium's renderers, the rest of Chromium, or
    everything else (engines, services, hook host, hooks, Playwright's driver)."""
    if not proctree.exe_name(pid).startswith("chrom"):
        return "rest"
    return "renderers" if is_renderer(pid) else "chromium"


def label(pid: int) -> str:
    """A short name of a process for the report: its executable, the module a Python one
    runs (a hook forked from the hook host runs the host's: its folder says which)."""
    exe = proctree.exe_name(pid)
    args = proctree.cmdline(pid)
    if exe.startswith("chrom"):
        kind = next((a[7:] for a in args if a.startswith("--type=")), "browser")
        return f"chromium {kind}"
    if exe.startswith("python") and "-m" in args[:-1]:
        module = args[args.index("-m") + 1]
        with contextlib.suppress(OSError):
            module += f" (in {os.path.basename(os.readlink(f'/proc/{pid}/cwd'))})"
        return module
    return exe


@dataclass
class Sampler:
    """Samples the summed PSS of this process's descendants in a thread; keeps the parts of
    the sample at the peak, its largest processes, and the largest renderer seen."""

    peak_kib: int = 0
    peak_parts_kib: dict[str, int] = field(default_factory=dict)
    peak_top: list[tuple[str, int]] = field(default_factory=list)
    """(label, KiB) of the processes at the peak holding TOP_KIB or more, largest first."""
    largest_renderer_kib: int = 0
    samples: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        me = os.getpid()
        parts: dict[int, str] = {}
        while not self.stop.is_set():
            sample = [
                (pid, parts.get(pid) or parts.setdefault(pid, part_of(pid)),
                 proctree.pss_bytes([pid]) >> 10)
                for pid in proctree.descendants(me)
                if pid != me
            ]  # fmt: skip
            total = sum(kib for _, _, kib in sample)
            renderers = [kib for _, part, kib in sample if part == "renderers"]
            self.largest_renderer_kib = max([self.largest_renderer_kib, *renderers])
            if total > self.peak_kib:
                self.peak_kib = total
                self.peak_parts_kib = {
                    name: sum(kib for _, part, kib in sample if part == name) for name in PARTS
                }
                top = sorted((x for x in sample if x[2] >= TOP_KIB), key=lambda x: -x[2])
                # a process may be gone by now (a renderer the watchdog just stopped)
                self.peak_top = [(label(pid) or f"{part} (gone)", kib) for pid, part, kib in top]
            self.samples += 1
            self.stop.wait(0.25)

    def parts_mb(self) -> str:
        """'renderers / rest of Chromium / the rest' at the peak, in MB."""
        return " / ".join(f"{self.peak_parts_kib.get(p, 0) / 1024:.0f}" for p in PARTS)

    def top_mb(self) -> str:
        """The processes named at the peak, 'label MB, ...'."""
        return ", ".join(f"{name} {kib / 1024:.0f}" for name, kib in self.peak_top)


@contextmanager
def sampling() -> Iterator[Sampler]:
    """A Sampler running in a thread for the time of the block."""
    sampler = Sampler()
    thread = threading.Thread(target=sampler.run, daemon=True, name="pss-sampler")
    thread.start()
    try:
        yield sampler
    finally:
        sampler.stop.set()
        thread.join()
