"""One liveness check of an archived link's original (a `LivenessCheck` job), as the capture
workers run it: light, and with three answers, never two.

- A platform's post (`shared.platforms.registry` knows the link): the platform's API steps,
  as its plugin's capture runs them (its chain, with the plugin's settings from its
  config.json: API bases, caps, timeouts, `<P>_STEPS`, cookies), never the browser. Present:
  the post's words are compared with the stored post's (`compare.post_changed`).
- Any other page: a conditional GET through `shared.fetching` (the target policy at every
  hop, connects to the checked address, the fetch plugin's timeouts and byte cap), with
  `If-None-Match` / `If-Modified-Since` from the newest capture's response headers. The
  answer is judged by `shared.platforms.http.judge` (404/410 gone; 429, 5xx, login walls,
  captchas and every fetch error unknown). Present: 304, or the body's sha256 equal to the
  capture's raw body's, is unchanged; otherwise both bodies' canonical texts decide. A page
  that now asks not to be archived (X-No-Archive, shared.content.no_archive) is present and
  unchanged: it is not captured again.

The capture's files are read from S3; when they cannot be, the check still answers, with
`changed` unknown (None).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared.errors import StorageError
from shared.fetching.exchange import Fetch, FetchLimits, FetchResult
from shared.filehash import sha256_file
from shared.hooks.config import env_prefix, load_plugin_config
from shared.liveness.check_evidence import CheckEvidence, observed, short_words
from shared.liveness.compare import post_changed, text_changed
from shared.messages import LivenessCheck, LivenessResult
from shared.platforms import hook
from shared.platforms.chain import Context, PostRef, run_chain
from shared.platforms.chains import PLATFORMS, recognise
from shared.platforms.http import Answer, judge
from shared.platforms.outcome import Evidence as StepEvidence
from shared.platforms.outcome import StepOutcome, unknown
from shared.platforms.registry import SITES, link_domains
from shared.s3 import ObjectStore

log = logging.getLogger(__name__)

HTTP = "http"
JUDGED_BYTES = 2_000_000
"""Bytes of the body the judge reads (a wall or a captcha shows at the start)."""
HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class CheckEnv:
    """Where the plugins' settings come from, and who checks."""

    plugins_dir: Path
    env: Mapping[str, str]
    """The worker's environment without secrets (the plugins' settings are read from it)."""
    worker: str


@dataclass(frozen=True)
class _Found:
    outcome: StepOutcome
    via: str
    changed: bool | None = None
    note: str = ""


class Checker:
    """Runs checks; `store` reads the newest capture's files (None: nothing is compared)."""

    def __init__(self, env: CheckEnv, store: ObjectStore | None) -> None:
        self.env, self.store = env, store

    async def check(self, job: LivenessCheck) -> LivenessResult:
        """Check one original; never raises for what the original or S3 do."""
        ref = recognise(job.url, self._instances())
        found: _Found | None = None
        if ref is not None and self._enabled(ref.platform):
            found = await self._platform(job, ref)
        if found is None:
            found = await self._page(job)
        ev: CheckEvidence = observed(found.outcome, found.via)
        words = ev.words or (short_words(found.note) if ev.answer == "present" else "")
        return LivenessResult(
            link_id=job.link_id,
            seq=job.seq,
            checked_at=datetime.now(UTC),
            answer=ev.answer,
            tombstone=ev.tombstone,
            status=ev.status,
            via=ev.via,
            reason=ev.reason,
            words=words,
            changed=found.changed if ev.answer == "present" else None,
            worker=self.env.worker,
        )

    def _instances(self) -> tuple[str, ...]:
        """The hosts of the platforms on any host (Mastodon's), as their plugins list them."""
        found: list[str] = []
        for name, site in SITES.items():
            if site.instances is not None and self._enabled(name):
                listed = str(self._values(name).get(site.instances, ""))
                found += link_domains(name, listed)
        return tuple(found)

    def _values(self, plugin: str) -> dict[str, Any]:
        return load_plugin_config(self.env.plugins_dir / plugin).values(self.env.env)

    def _enabled(self, plugin: str) -> bool:
        if not (self.env.plugins_dir / plugin / "config.json").is_file():
            return False
        return self._values(plugin).get(f"{env_prefix(plugin)}_ENABLED", True) is not False

    async def _platform(self, job: LivenessCheck, ref: PostRef) -> _Found | None:
        """The platform's API steps (None when none runs: the page is checked instead)."""
        plugin = ref.platform
        platform = PLATFORMS[plugin]
        values = self._values(plugin)
        settings = hook.settings(plugin, values, platform.bases, job.url)
        with hook.client(plugin, values, settings, None) as http:
            result = await run_chain(Context(settings, http), ref, platform.chain)
        step = result.deciding
        if step is None:
            return None
        changed = None
        if step.verdict == "present" and step.post is not None:
            changed = post_changed(step.post, job.post_sha256)
        return _Found(step, f"{plugin}:{step.step}", changed)

    async def _page(self, job: LivenessCheck) -> _Found:
        """The conditional GET of the page, judged, then compared with the newest capture."""
        values = self._values("fetch")
        conditions, note = await self._conditions(job.headers_key)
        workdir = Path(tempfile.mkdtemp(prefix="dla-check-"))
        try:
            fetch = Fetch(
                replace(FetchLimits.of_settings(values), store_not_html=True),
                user_agent=str(values["USER_AGENT"]),
                allow_private=bool(values["ALLOW_PRIVATE_TARGETS"]),
                workdir=workdir,
            )
            fetch.headers.update(conditions)
            res = await fetch.run(job.url)
            return await self._judged(job, res, note)
        finally:
            await asyncio.to_thread(shutil.rmtree, workdir, True)

    async def _conditions(self, headers_key: str | None) -> tuple[dict[str, str], str]:
        """If-None-Match / If-Modified-Since from the capture's response headers."""
        if headers_key is None or self.store is None:
            return {}, ""
        try:
            meta = json.loads(await self.store.get_bytes(headers_key))
        except (StorageError, ValueError) as exc:
            return {}, f"capture headers unreadable: {exc}"
        found = {str(k).lower(): str(v) for k, v in meta.get("headers") or [] if k and v}
        conditions = {}
        if "etag" in found:
            conditions["If-None-Match"] = found["etag"]
        if "last-modified" in found:
            conditions["If-Modified-Since"] = found["last-modified"]
        return conditions, ""

    async def _judged(self, job: LivenessCheck, res: FetchResult, note: str) -> _Found:
        status = res.response.status if res.response else None
        if status == 304:
            return _Found(_present(job.url, 304, "not_modified"), HTTP, False, note)
        head = b""
        if res.body is not None:
            with res.body.open("rb") as f:
                head = f.read(JUDGED_BYTES)
        kind = res.sniffed.effective if res.sniffed else ""
        headers = tuple(res.response.headers) if res.response else ()
        answer = Answer(job.url, res.final_url, status, res.error, res.message, head, kind, headers)
        judged = judge(HTTP, answer)
        if judged is not None:
            return _Found(judged, HTTP, None, note)
        if answer.declined:  # it is there, and asks not to be archived: no capture again
            why = f"the page asks not to be archived ({answer.declined})"
            return _Found(_present(job.url, status, "ok"), HTTP, False, why)
        if res.body is None:
            outcome = unknown(HTTP, job.url, status, "no_answer", res.message or "no body")
            return _Found(outcome, HTTP, None, note)
        changed, why = await self._changed(job, res.body, kind)
        return _Found(_present(job.url, status, "ok"), HTTP, changed, why or note)

    async def _changed(self, job: LivenessCheck, body: Path, kind: str) -> tuple[bool | None, str]:
        """Whether the body says something else than the capture's raw body."""
        _, digest = await asyncio.to_thread(sha256_file, body)
        if job.raw_sha256 is not None and digest == job.raw_sha256:
            return False, ""
        if job.raw_key is None or self.store is None:
            return None, "no capture to compare with"
        values = self._values("readable")
        cap, tags = int(values["READABLE_MAX_HTML_BYTES"]), int(values["READABLE_MAX_TAGS"])
        try:
            old = await _read_start(self.store, job.raw_key, cap)
        except StorageError as exc:
            return None, f"capture body unreadable: {exc}"
        if kind not in HTML_TYPES:
            return True, ""  # not a page: its bytes are what it says
        new = await asyncio.to_thread(_read, body, cap)
        changed = await asyncio.to_thread(text_changed, old, new, job.url, kind, cap, tags)
        return changed, ""


def _present(url: str, status: int | None, reason: str) -> StepOutcome:
    return StepOutcome(HTTP, "present", StepEvidence(url, status, reason))


def _read(path: Path, limit: int) -> bytes:
    with path.open("rb") as f:
        return f.read(limit)


async def _read_start(store: ObjectStore, key: str, limit: int) -> bytes:
    """The first `limit` bytes of an object."""
    chunks, _ = await store.open(key)
    data = bytearray()
    async for chunk in chunks:
        data += chunk
        if len(data) >= limit:
            break
    await chunks.aclose()
    return bytes(data[:limit])
