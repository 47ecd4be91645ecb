"""Domain policy (seed spec §3.3): whether a canonical URL is archived. The writer decides
with it (``services/writer/job_policy.py``), and the web pre-checks submissions.

``DomainPolicy.decide`` on a ``CanonicalUrl``, first rule that applies wins:

1. scheme not http(s) -> ``skip``, ``scheme:<s>`` (canonicalize never produces one;
   defensive);
2. host equal to or under an ``exclude`` entry -> ``skip``, ``excluded:<entry>``
   (exclusion wins over the allowlist);
3. mode ``all`` -> ``archive``, ``mode:all``;
4. host equal to or under an ``allowlist`` entry (entries are registrable domains or
   names below one: ``www.example.com`` matches ``example.com``; the public suffix list is
   used offline, so ``co.uk`` never matches everything) -> ``archive``,
   ``allowlist:<entry>``;
5. a short link (``needs_resolve``, e.g. ``bit.ly``) -> ``archive``,
   ``resolve-first:<host>``: where it leads is unknown until resolved, and a skipped
   link is lost for good (the poller resolves short links before publishing);
6. otherwise -> ``skip``, ``not-deletable``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from shared.links.canonical import CanonicalUrl
from shared.links.domains import host_matches
from shared.links.urlparts import scheme_of, supported_scheme
from shared.platforms import registry

DEFAULT_ALLOWLIST: tuple[str, ...] = registry.DELETABLE
"""Registrable domains archived in ``deletable`` mode unless DELETABLE_ALLOWLIST says
otherwise: the deletable-content platforms' (``shared.platforms.registry``)."""
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "web.archive.org",
    "archive.org",
    "archive.today",
    "archive.ph",
    "archive.is",
)
"""Domains never archived unless EXCLUDE_DOMAINS says otherwise (archives of archives)."""

Mode = Literal["deletable", "all"]
Decision = Literal["archive", "skip"]


def _entry(value: str) -> str:
    v = value.strip().lower().rstrip(".")
    if v.startswith("*."):
        v = v[2:]
    v = v.lstrip(".")
    if not v.isascii():
        with contextlib.suppress(UnicodeError):
            v = v.encode("idna").decode("ascii")
    return v


def _entries(values: Iterable[str]) -> frozenset[str]:
    return frozenset(e for e in (_entry(v) for v in values if isinstance(v, str)) if e)


@dataclass(frozen=True)
class DomainPolicy:
    """ARCHIVE_MODE plus the allowlist and exclude list (entries normalised on creation)."""

    mode: Mode = "deletable"
    allowlist: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_ALLOWLIST))
    exclude: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_EXCLUDE))

    def __post_init__(self) -> None:
        if self.mode not in ("deletable", "all"):
            raise ValueError(f"ARCHIVE_MODE must be 'deletable' or 'all', not {self.mode!r}")
        object.__setattr__(self, "allowlist", _entries(self.allowlist))
        object.__setattr__(self, "exclude", _entries(self.exclude))

    def decide(self, canonical: CanonicalUrl) -> tuple[Decision, str]:
        """(decision, reason) for one canonical URL; see the module docstring."""
        if not supported_scheme(canonical.canonical):
            return "skip", f"scheme:{scheme_of(canonical.canonical)[:20]}"
        host = canonical.domain
        hit = host_matches(host, self.exclude)
        if hit is not None:
            return "skip", f"excluded:{hit}"
        if self.mode == "all":
            return "archive", "mode:all"
        hit = host_matches(host, self.allowlist)
        if hit is not None:
            return "archive", f"allowlist:{hit}"
        if canonical.needs_resolve:
            return "archive", f"resolve-first:{host}"
        return "skip", "not-deletable"
