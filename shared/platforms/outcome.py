"""What one step of a platform chain found: the post is `present`, it is `gone` (with the
platform's own evidence), or the answer is `unknown`.

`gone` needs positive evidence: HTTP 404 or 410, or the platform's own words (an X
tombstone or unavailable reason, Bluesky's not-found post, Reddit's `[removed]`, YouTube's
unplayable status with its reason, TikTok's status code, a suspended or deleted account).
Everything else is `unknown`: 429, 5xx, timeouts, DNS failures, login walls, captchas, HTML
where JSON was expected, malformed or cut JSON. A liveness check (issue 24) stores these
outcomes as they are; a capture takes the post from the first `present` step, stops at a
`gone` one, and tries the next step after an `unknown` one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from shared.hooks.error_codes import KINDS, What, code, http_code
from shared.platforms.post import Post

Answer = Literal["present", "gone", "unknown"]
"""What a step, a check or a chain found of an original: the three answers, defined here
once (liveness messages, observations and verdicts read them from here)."""

GONE_CODES: dict[str, What] = {
    "not_found": "NOT_FOUND",
    "deleted": "REMOVED",
    "removed": "REMOVED",
    "suspended": "REMOVED",
    "tombstone": "REMOVED",
    "protected": "PRIVATE",
    "private": "PRIVATE",
}
"""A `gone` reason -> the `<WHAT>` of its error code (shared.hooks.error_codes)."""
UNKNOWN_CODES: dict[str, What] = {
    "rate_limited": "RATE_LIMITED",
    "login_wall": "LOGIN_WALL",
    "logged_out": "LOGGED_OUT",
    "login_required": "LOGIN_REQUIRED",
    "blocked": "BLOCKED",
    "bad_answer": "BAD_ANSWER",
    "too_large": "TOO_LARGE",
    "http_5xx": "HTTP_5XX",
    "no_post": "NO_POST",
    "unsupported": "NO_POST",
    "consent_wall": "CONSENT_WALL",
    "unavailable": "UNAVAILABLE",
    "handle_unresolved": "UNAVAILABLE",
    "no_answer": "FAILED",
    "network": "NETWORK",
    "geo_blocked": "GEO_BLOCKED",
    "age_gate": "AGE_GATE",
    "declined": "DECLINED",
}
"""An `unknown` reason -> the `<WHAT>` of its error code; a fetch error kind (TIMEOUT,
STALLED, DNS, REFUSED, ...) is its own `<WHAT>`."""


@dataclass(frozen=True)
class Evidence:
    """What the step saw: the address asked, the HTTP status, a short reason and the
    platform's own words (or the error message)."""

    url: str
    status: int | None
    reason: str
    """present: `ok`; gone: not_found, deleted, removed, suspended, protected, tombstone...;
    unknown: rate_limited, http_5xx, login_wall, logged_out, bad_answer, too_large, a fetch
    error kind in lower case (timeout, stalled, dns, refused ...)."""
    text: str = ""
    retry_after_s: float | None = None
    """The wait a rate-limited answer asked for (its Retry-After), when it said."""


@dataclass(frozen=True)
class StepOutcome:
    """The end of one step."""

    step: str
    verdict: Answer
    evidence: Evidence
    post: Post | None = None
    """The post when present; when gone, what the platform still shows of it, if anything
    (a Reddit post `[removed]` by its moderators keeps its title and comments)."""
    kept: tuple[str, ...] = ()
    """The files the step kept in the capture's folder (shared.platforms.chain.Keeping)."""

    def as_dict(self) -> dict[str, Any]:
        """The attempt as recorded in `<platform>.json` (no post: post.json holds it)."""
        kept = {"kept": list(self.kept)} if self.kept else {}
        seen = {k: v for k, v in asdict(self.evidence).items() if v is not None or k == "status"}
        return {"step": self.step, "verdict": self.verdict, **seen, **kept}


def present(step: str, url: str, status: int | None, post: Post) -> StepOutcome:
    """The step produced the post."""
    return StepOutcome(step, "present", Evidence(url, status, "ok"), post)


def gone(
    step: str, url: str, status: int | None, reason: str, text: str = "", post: Post | None = None
) -> StepOutcome:
    """The platform says the post is gone (reason: a key of GONE_CODES); `post`: what it
    still shows."""
    return StepOutcome(step, "gone", Evidence(url, status, reason, text[:1000]), post)


def unknown(
    step: str,
    url: str,
    status: int | None,
    reason: str,
    text: str = "",
    retry_after_s: float | None = None,
) -> StepOutcome:
    """The step could not tell (reason: a key of UNKNOWN_CODES or a fetch error kind;
    `retry_after_s`: the wait a rate-limited answer asked for)."""
    return StepOutcome(step, "unknown", Evidence(url, status, reason, text[:1000], retry_after_s))


DECLINED = "declined"
"""The reason of a `declined` outcome."""


def kept(step: str, url: str, status: int | None, files: tuple[str, ...]) -> StepOutcome:
    """A capture's step kept `files` (a page) and says nothing of the post: unknown, `kept`."""
    return StepOutcome(step, "unknown", Evidence(url, status, "kept"), kept=files)


def declined(step: str, url: str, status: int | None, why: str) -> StepOutcome:
    """An answer of a capture asks not to be archived (X-No-Archive header or meta): the
    chain ends there and the capture keeps nothing."""
    return unknown(step, url, status, DECLINED, why)


@dataclass
class ChainResult:
    """Every step's outcome, in order, and what they add up to."""

    platform: str
    url: str
    steps: list[StepOutcome] = field(default_factory=list)

    @property
    def post(self) -> Post | None:
        """The post of the first step that found it, else what a `gone` answer still shows."""
        found = next((s.post for s in self.steps if s.verdict == "present"), None)
        return found or next((s.post for s in self.steps if s.post is not None), None)

    @property
    def verdict(self) -> Answer:
        """present when a step found the post, gone when one had the platform's evidence
        that it is gone (and none found it), else unknown."""
        verdicts = {s.verdict for s in self.steps}
        return "present" if "present" in verdicts else "gone" if "gone" in verdicts else "unknown"

    @property
    def deciding(self) -> StepOutcome | None:
        """The step whose outcome is the verdict (for unknown: the first step's)."""
        return next((s for s in self.steps if s.verdict == self.verdict), None)

    @property
    def kept(self) -> tuple[str, ...]:
        """The files the steps kept, in order."""
        return tuple(f for s in self.steps for f in s.kept)

    @property
    def retry_after_s(self) -> float | None:
        """The longest wait a rate-limited answer of the steps asked for, if any said."""
        waits = [s.evidence.retry_after_s for s in self.steps]
        return max((w for w in waits if w is not None), default=None)

    @property
    def declined(self) -> str | None:
        """Why an answer asked not to be archived, when one did."""
        return next((s.evidence.text for s in self.steps if s.evidence.reason == DECLINED), None)

    def error_code(self, prefix: str) -> str | None:
        """`E_<PREFIX>_<WHAT>` (shared.hooks.error_codes) when no step found the post, else
        None. `prefix`: the plugin's settings prefix (`X`, `BLUESKY` ...)."""
        step = self.deciding
        if step is None or step.verdict == "present":
            return None if step else code(prefix, "NO_POST")
        reason = step.evidence.reason
        if reason == "http_4xx" and step.evidence.status:
            return http_code(prefix, step.evidence.status)
        table = GONE_CODES if step.verdict == "gone" else UNKNOWN_CODES
        return code(prefix, table.get(reason) or what_of_reason(reason))

    def report(self) -> dict[str, Any]:
        """`<platform>.json`: every attempt with its verdict, and which step worked."""
        post = self.post
        return {
            "url": self.url,
            "platform": self.platform,
            "verdict": self.verdict,
            "source": post.source if post else None,
            "attempts": [s.as_dict() for s in self.steps],
        }

    def summary(self) -> str:
        """One line: which step worked, or why each failed."""
        parts = [
            f"{s.step}: kept {', '.join(s.kept)}"
            if s.kept and s.verdict == "unknown"
            else f"{s.step}: {s.verdict if s.verdict == 'present' else s.evidence.reason}"
            + (f" {s.evidence.status}" if s.evidence.status and s.verdict != "present" else "")
            for s in self.steps
        ]
        return "; ".join(parts)[:500]


def what_of_reason(reason: str) -> What:
    """A fetch error kind in lower case (timeout, stalled, dns ...) as its `<WHAT>`; FAILED
    for anything else."""
    upper = reason.upper()
    return next((w for w in KINDS if w == upper), "FAILED")
