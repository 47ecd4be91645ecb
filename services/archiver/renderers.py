"""The renderer watchdog: bounds each page's memory while it loads.

A browser restart (`BROWSER_MAX_PSS_MB`) acts only between snapshots; a hostile page (tens
of MB of dense markup, a script filling arrays) grows its renderer by gigabytes within one
navigation. So while snapshot contexts are open the broker calls `RendererWatch.over_limit`
every `BROWSER_RENDERER_CHECK_SECONDS` and kills each renderer past `BROWSER_MAX_RENDERER_MB`;
while a renderer is past half the limit it measures the renderers it knows every 0.1 s (a
dense document grows one by ~300 MB/s here), rescanning the process tree at the slower pace.

What is measured is a renderer's resident memory that no file backs (`RssAnon + RssShmem`,
`shared.processes.unshared_resident_bytes`): the DOM, layout, JS heap and raster memory the
page made, not the Chromium binary's pages every process of the browser shares. It is read
from the kernel, not asked of the browser, so a renderer or browser busy parsing cannot delay
it.

Why a renderer is a page: Chromium never shares a renderer process between browser
contexts (one per snapshot), and the broker turns site isolation off, so a page's
cross-site frames live in its own renderer instead of one process each (a page could
otherwise spread its memory over any number of frames, each under the limit).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

from shared import processes

TYPE_FLAG = "--type="


@dataclass(frozen=True)
class RendererKill:
    """A renderer the watchdog stopped."""

    pid: int
    bytes: int
    """Its memory at the check that found it over the limit."""
    limit: int
    at: float
    """time.monotonic() of the kill."""

    @property
    def mib(self) -> int:
        """Its memory in MiB, rounded up: a renderer 0.3 MiB past a 200 MiB limit used 201."""
        return -(-self.bytes // (1 << 20))

    @property
    def limit_mib(self) -> int:
        return self.limit >> 20

    def describe(self) -> str:
        """One line for logs and the page's error message."""
        return (
            f"the page's renderer used {self.mib} MiB, past the "
            f"{self.limit_mib} MiB limit (BROWSER_MAX_RENDERER_MB): it was stopped"
        )


def process_type(pid: int) -> str | None:
    """A Chromium process's `--type=` (renderer, gpu-process, zygote...); None for the browser
    process, any other process, or one that is gone."""
    for arg in processes.cmdline(pid):
        if arg.startswith(TYPE_FLAG):
            return arg[len(TYPE_FLAG) :]
    return None


def is_renderer(pid: int) -> bool:
    """True for a Chromium renderer process."""
    return process_type(pid) == "renderer"


SETTLED_TYPES = frozenset({"renderer", "gpu-process", "utility", "broker", "crashpad-handler"})
"""Types a process keeps for life. A renderer starts as a fork of the zygote (`--type=zygote`)
or of whatever spawned it, and only then rewrites its command line: a verdict read in that
moment must be read again at the next scan, or that renderer is never watched."""


class RendererWatch:
    """Finds the renderer processes of a browser tree and those past the limit."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self._is_renderer: dict[int, bool] = {}
        """Verdicts of processes whose type is settled (SETTLED_TYPES)."""
        self._found: list[int] = []
        self._root = 0
        self.largest = 0
        """Bytes of the largest renderer at the last check."""

    def renderers(self, root: int) -> list[int]:
        """PIDs of the renderer processes below root (a settled process's command line is
        read once; the others' at every scan)."""
        tree = processes.descendants(root)
        alive = set(tree)
        for pid in [p for p in self._is_renderer if p not in alive]:
            del self._is_renderer[pid]
        found = []
        for pid in tree:
            known = self._is_renderer.get(pid)
            if known is None:
                kind = process_type(pid)
                known = kind == "renderer"
                if kind in SETTLED_TYPES:
                    self._is_renderer[pid] = known
            if known:
                found.append(pid)
        return found

    def over_limit(self, root: int, rescan: bool = True) -> list[tuple[int, int]]:
        """(pid, bytes) of each renderer below root past the limit. rescan=False measures the
        renderers the last scan found: a few reads instead of a walk of every process."""
        if rescan or root != self._root:
            self._found, self._root = self.renderers(root), root
        sizes = [(pid, processes.unshared_resident_bytes(pid)) for pid in self._found]
        self.largest = max((b for _, b in sizes), default=0)
        return [(pid, b) for pid, b in sizes if b > self.limit_bytes]

    def kill(self, pid: int, size: int) -> RendererKill:
        """Stop one renderer (SIGKILL); its pages crash, the browser lives on."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        self._is_renderer.pop(pid, None)
        return RendererKill(pid, size, self.limit_bytes, time.monotonic())
