"""One hook process: spawning it in its own session, and reading its capped output."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shared import processes
from shared.hooks.limits import HookLimits
from shared.hooks.limits import apply as apply_limits

log = logging.getLogger(__name__)

OUTPUT_CAP = 16 * 1024 * 1024
"""Bytes of stdout (and, separately, of stderr) kept per hook; the rest is read and dropped."""
MAX_LINE = 4 * 1024 * 1024
"""Longest stdout line parsed as a record; longer lines are dropped with a warning."""
CHUNK = 256 * 1024
"""Read size."""
DRAIN_TIMEOUT = 2.0
"""Seconds to wait for stdout/stderr EOF after the hook exited (a stray daemon may hold them)."""


@dataclass
class HookProcess:
    """A running hook: the leader of its own session and process group (pgid == pid)."""

    pid: int
    """Process id (also the process group id)."""
    exited: asyncio.Future[int]
    """Resolves to the return code: the exit status, or -N when killed by signal N."""

    @property
    def done(self) -> bool:
        """True once the leader has exited and been reaped."""
        return self.exited.done()

    def signal(self, sig: int) -> None:
        """Signal the whole group (or the leader alone in the instant before its setsid)."""
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            if not self.done:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, sig)
        except PermissionError:
            pass

    def leftovers(self) -> list[int]:
        """Live processes still in the hook's group (after the leader exited)."""
        return processes.group_members(self.pid)


async def spawn_exec(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    stdout: int,
    stderr: int,
    limits: HookLimits | None = None,
) -> HookProcess:
    """Exec `argv` directly in a new session, stdin from /dev/null, output to the given fds,
    under `limits` (set with prlimit(2) as soon as the child exists: no preexec_fn, which is
    unsafe in a threaded process and forces the slow fork path)."""
    lim = limits or HookLimits(0, 0)

    for attempt in range(5):
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
            break
        except OSError as e:
            # "Text file busy": the script was just written and a concurrent fork elsewhere
            # still holds a write fd to it for a moment; transient, so try again shortly
            if e.errno != errno.ETXTBSY or attempt == 4:
                raise
            await asyncio.sleep(0.01 * (attempt + 1))
    with contextlib.suppress(ProcessLookupError):  # already gone: its exit status tells
        apply_limits(lim.memory_bytes, lim.cpu_seconds, pid=proc.pid)
    return HookProcess(proc.pid, asyncio.ensure_future(proc.wait()))


async def _open_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK, loop=loop)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


@dataclass
class StreamStats:
    """What a pump saw on one stream."""

    kept: int = 0
    """Bytes kept (parsed or written to the log)."""
    dropped: int = 0
    """Bytes read past the cap and thrown away."""
    tail: bytearray = field(default_factory=bytearray)
    """Last bytes kept (stderr only), for error messages."""
    lines: int = 0
    """Lines handled (stdout only)."""

    @property
    def progress(self) -> tuple[int, int, int]:
        """Changes whenever the pump makes progress."""
        return (self.kept, self.dropped, self.lines)


async def pump_lines(
    fd: int,
    on_record: Callable[[bytes], Awaitable[None]],
    on_junk: Callable[[bytes], None],
    name: str,
    stats: StreamStats,
    cap: int = OUTPUT_CAP,
) -> StreamStats:
    """Read `fd` to EOF within `cap` bytes, line by line as it arrives: lines that look like
    JSON objects go to `on_record`, other non-blank lines to `on_junk` (cheap, synchronous)."""
    reader, transport = await _open_reader(fd)
    buf, skipping = bytearray(), False

    async def line_done(line: bytes) -> None:
        stats.lines += 1
        line = line.strip()
        if line.startswith(b"{"):
            await on_record(line)
        elif line:
            on_junk(line)

    try:
        while chunk := await reader.read(CHUNK):
            room = cap - stats.kept
            if room <= 0:
                stats.dropped += len(chunk)
                continue
            if len(chunk) > room:
                log.warning("%s: stdout passed %d bytes; the rest is discarded", name, cap)
                stats.dropped += len(chunk) - room
                chunk = chunk[:room]
            stats.kept += len(chunk)
            lines = chunk.split(b"\n")
            for i, piece in enumerate(lines):
                last = i == len(lines) - 1
                if skipping:
                    skipping = last  # still inside the over-long line until a newline
                    continue
                if last:
                    buf += piece
                    if len(buf) > MAX_LINE:
                        log.warning("%s: stdout line over %d bytes dropped", name, MAX_LINE)
                        buf.clear()
                        skipping = True
                elif buf:
                    buf += piece
                    await line_done(bytes(buf))
                    buf.clear()
                else:
                    await line_done(piece)
        if buf and not skipping and not stats.dropped:
            await line_done(bytes(buf))
    finally:
        transport.close()
    return stats


async def pump_log(
    fd: int, path: Path, name: str, stats: StreamStats, cap: int = OUTPUT_CAP
) -> StreamStats:
    """Copy `fd` to the log file `path` as it arrives, within `cap` bytes; keeps a short tail."""
    reader, transport = await _open_reader(fd)
    try:
        with path.open("wb") as log_file:
            while chunk := await reader.read(CHUNK):
                room = cap - stats.kept
                if room <= 0:
                    stats.dropped += len(chunk)
                    continue
                if len(chunk) > room:
                    stats.dropped += len(chunk) - room
                    chunk = chunk[:room]
                stats.kept += len(chunk)
                log_file.write(chunk)
                log_file.flush()
                stats.tail = (stats.tail + chunk)[-2048:]
            if stats.dropped:
                log.warning("%s: stderr passed %d bytes; %d discarded", name, cap, stats.dropped)
                log_file.write(
                    f"\n[runner] stderr capped: {stats.dropped} bytes discarded\n".encode()
                )
    finally:
        transport.close()
    return stats


@dataclass
class OutputStreams:
    """A running hook's two output readers and what they have read."""

    log_path: Path
    out_stats: StreamStats = field(default_factory=StreamStats)
    err_stats: StreamStats = field(default_factory=StreamStats)
    out_task: asyncio.Future[StreamStats] = field(init=False)
    err_task: asyncio.Future[StreamStats] = field(init=False)

    def cancel(self) -> None:
        """Stop reading both."""
        self.out_task.cancel()
        self.err_task.cancel()

    async def drain(self) -> set[asyncio.Future[StreamStats]]:
        """Wait for EOF on both streams while they make progress (a slow observer is fine);
        returns the streams that stalled for DRAIN_TIMEOUT (held open by a stray process)."""
        tasks = {self.out_task, self.err_task}
        last = (self.out_stats.progress, self.err_stats.progress)
        while True:
            _, pending = await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT)
            now = (self.out_stats.progress, self.err_stats.progress)
            if not pending or now == last:
                return pending
            last = now
