"""What one liveness check's answer is worth as evidence, and how a reader is told it.

A check ends as one `StepOutcome` (`shared.platforms.outcome`): a platform step's, or the
conditional GET's judged by `shared.platforms.http.judge`, the one reader of what an HTTP
answer says by itself (404/410 gone; 429, 5xx, login walls, captchas, fetch errors unknown).
`observed` turns it into the fields an observation keeps: the answer, whether a `gone` is the
platform's own tombstone, the status, how it was asked, a short reason word and the
platform's words. `describe` says it in words for the verdict and the badges.

A `gone` is the platform's own tombstone unless it is a bare HTTP 404 or 410 (`bare`): the
platform's words (Reddit's `removed_by_category`, an X tombstone, YouTube's unplayable reason,
TikTok's status code, Bluesky's not-found post, a suspended or deleted account) are believed
after the shorter LIVENESS_CONFIRM_TOMBSTONE_SECONDS; a 404 may be a moved page or a passing
fault and waits LIVENESS_CONFIRM_SECONDS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.messages import Answer
from shared.platforms.outcome import StepOutcome

WORDS_MAX = 300
_ADDRESS = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class CheckEvidence:
    """The fields of one observation."""

    answer: Answer
    tombstone: bool
    status: int | None
    via: str
    reason: str
    words: str


def bare(outcome: StepOutcome) -> bool:
    """A `gone` that is only an HTTP 404 or 410, not the platform's own words."""
    e = outcome.evidence
    return outcome.verdict == "gone" and e.reason == "not_found" and e.status in (404, 410)


def short_words(text: str) -> str:
    """The words kept with an observation: addresses left out (they are the link's, or an
    API's; kept they would make every observation's words unique), spaces collapsed, cut."""
    return _SPACE.sub(" ", _ADDRESS.sub("", text)).strip()[:WORDS_MAX]


def observed(outcome: StepOutcome, via: str) -> CheckEvidence:
    """The observation's fields of a check that ended with `outcome`, asked `via`."""
    e = outcome.evidence
    return CheckEvidence(
        answer=outcome.verdict,
        tombstone=outcome.verdict == "gone" and not bare(outcome),
        status=e.status,
        via=via[:60],
        reason=e.reason[:40],
        words="" if outcome.verdict == "present" else short_words(e.text),
    )


_REMOVED_BY = (
    (re.compile(r"moderator|automod", re.I), "removed by a moderator"),
    (re.compile(r"copyright", re.I), "removed for copyright"),
    (re.compile(r"author|deleted by (the )?(uploader|user|owner)", re.I), "deleted by its author"),
    (re.compile(r"terms|guidelines|policy|violat", re.I), "removed by the platform"),
)
DELETED_AT_SOURCE = "deleted at source"
_GONE_WORDS = {
    "suspended": "account suspended",
    "deleted": "deleted by its author",
    "protected": "made private",
    "private": "made private",
    "not_found": DELETED_AT_SOURCE,
}
_UNKNOWN_WORDS = {
    "rate_limited": "rate limited",
    "http_5xx": "server error",
    "login_wall": "login wall",
    "logged_out": "login wall",
    "login_required": "login wall",
    "consent_wall": "consent wall",
    "blocked": "bot check (captcha)",
    "timeout": "timed out",
    "stalled": "stalled",
    "dns": "name lookup failed",
    "refused": "address refused",
    "no_host": "the site's name does not exist",
    "bad_answer": "unreadable answer",
}


def describe(answer: Answer, reason: str, status: int | None, words: str, tombstone: bool) -> str:
    """An observation in a few words: `HTTP 404`, `removed by a moderator`, `account
    suspended`, `rate limited (HTTP 429)`, `online` ..."""
    if answer == "present":
        return "online"
    if answer == "gone":
        if not tombstone:
            return f"HTTP {status}" if status else "not found"
        if reason in ("removed", "tombstone"):
            found = next((say for rule, say in _REMOVED_BY if rule.search(words)), None)
            return found or "removed by the platform"
        return _GONE_WORDS.get(reason) or (words[:80] or "removed")
    said = _UNKNOWN_WORDS.get(reason) or reason.replace("_", " ")
    return f"{said} (HTTP {status})" if status else said


def badge(state: str, reason: str | None, tombstone: bool, day: str) -> str | None:
    """The badge of a link whose original is gone: the platform's own reason ("removed by a
    moderator", "account suspended"), else "deleted at source on <day>"; None otherwise."""
    if state != "gone":
        return None
    if tombstone and reason and reason != DELETED_AT_SOURCE:
        return reason
    return f"{DELETED_AT_SOURCE} on {day}"
