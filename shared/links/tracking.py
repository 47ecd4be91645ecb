"""Tracking-parameter stripping driven by a maintained rule list.

Why a shipped data file and not a PyPI package: the PyPI packages that wrap the ClearURLs
rules (unalix, url-sanitize, url-unwrap, ...) are little used, some unmaintained, and
several fetch rules over the network at run time. The rules themselves are the maintained
part, so we ship a generated subset of the ClearURLs rule set (``clearurls_rules.json``,
LGPL-3.0, provenance in ``CLEARURLS.md``) and apply it here with ClearURLs' own semantics:

- a provider applies when its ``urlPattern`` matches the URL (case-insensitively) and none
  of its ``exceptions`` does;
- a query (or fragment) parameter is removed when a rule matches its *whole* name,
  case-insensitively (ClearURLs builds ``new RegExp("^" + rule + "$", "gi")``). The name is
  tested both as written and percent-decoded.

``SUPPLEMENT`` adds a few parameters ClearURLs does not know yet for the platforms we
archive; keep it short and prefer contributing upstream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import unquote_plus

RULES_FILE = "clearurls_rules.json"

# Parameters missing from ClearURLs for platforms in the default allowlist:
# (provider name, urlPattern, parameter-name regexes).
SUPPLEMENT: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "dla:tiktok",
        r"^https?:\/\/(?:[a-z0-9-]+\.)*?tiktok\.com",
        ("is_from_webapp", "sender_device", "sender_web_id", "web_id", "is_copy_url", "refer"),
    ),
    ("dla:threads", r"^https?:\/\/(?:[a-z0-9-]+\.)*?threads\.(?:net|com)", ("igshid", "igsh")),
    ("dla:reddit", r"^https?:\/\/(?:[a-z0-9-]+\.)*?reddit\.com", ("share_id", "ref_source")),
)

_PATH_PART = re.compile(r"\\/|/|\\\?")


@dataclass(frozen=True)
class Provider:
    """One rule provider: where it applies and which parameter names it removes."""

    name: str
    url_pattern: re.Pattern[str]
    rules: re.Pattern[str]
    exceptions: re.Pattern[str] | None
    host_only: bool
    """True when ``url_pattern`` looks at scheme and host only (so it can be cached per host)."""


def _compile_provider(
    name: str, url_pattern: str, rules: Iterable[str], exceptions: Iterable[str]
) -> Provider:
    rule_list = list(rules)
    exc_list = list(exceptions)
    after_scheme = re.sub(r"^\^?https\?:\\?/\\?/", "", url_pattern)
    return Provider(
        name=name,
        url_pattern=re.compile(url_pattern, re.IGNORECASE),
        rules=re.compile("(?:" + "|".join(f"(?:{r})" for r in rule_list) + r")\Z", re.IGNORECASE),
        exceptions=(
            re.compile("|".join(f"(?:{e})" for e in exc_list), re.IGNORECASE) if exc_list else None
        ),
        host_only=not _PATH_PART.search(after_scheme),
    )


class TrackingRules:
    """A set of providers; strips matching parameters from (name, value) pairs."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        self.providers = tuple(providers)
        self._host_only = tuple(p for p in self.providers if p.host_only)
        self._path_dependent = tuple(p for p in self.providers if not p.host_only)
        self._for_origin = lru_cache(maxsize=4096)(self._host_providers)

    @classmethod
    def from_clearurls(cls, data: Mapping[str, Any], *, supplement: bool = True) -> TrackingRules:
        """Rules from a ClearURLs-format document (``{"providers": {name: spec}}``)."""
        providers = [
            _compile_provider(
                name, spec["urlPattern"], spec.get("rules") or [], spec.get("exceptions") or []
            )
            for name, spec in data["providers"].items()
            if spec.get("rules") and not spec.get("completeProvider")
        ]
        if supplement:
            providers.extend(_compile_provider(n, p, r, ()) for n, p, r in SUPPLEMENT)
        return cls(providers)

    @classmethod
    def from_names(cls, names: Iterable[str], *, case_sensitive: bool = True) -> TrackingRules:
        """Rules removing exactly these parameter names on every site (used by tests)."""
        flags = 0 if case_sensitive else re.IGNORECASE
        pattern = re.compile("(?:" + "|".join(re.escape(n) for n in names) + r")\Z", flags)
        return cls([Provider("names", re.compile(""), pattern, None, True)])

    def _host_providers(self, origin: str) -> tuple[Provider, ...]:
        return tuple(p for p in self._host_only if p.url_pattern.match(origin))

    def applicable(self, origin: str, url: str) -> list[re.Pattern[str]]:
        """Rule patterns of the providers that apply to ``url`` (origin = ``scheme://host/``)."""
        found: list[re.Pattern[str]] = []
        for p in self._for_origin(origin):
            if p.exceptions is None or not p.exceptions.match(url):
                found.append(p.rules)
        for p in self._path_dependent:
            if p.url_pattern.match(url) and (p.exceptions is None or not p.exceptions.match(url)):
                found.append(p.rules)
        return found

    def strip(
        self, origin: str, url: str, pairs: Sequence[tuple[str, str | None]]
    ) -> list[tuple[str, str | None]]:
        """``pairs`` without the tracking parameters that apply to ``url``."""
        if not pairs:
            return []
        rules = self.applicable(origin, url)
        if not rules:
            return list(pairs)
        kept: list[tuple[str, str | None]] = []
        for key, value in pairs:
            decoded = unquote_plus(key) if ("%" in key or "+" in key) else key
            if any(r.match(key) or (decoded is not key and r.match(decoded)) for r in rules):
                continue
            kept.append((key, value))
        return kept


@lru_cache(maxsize=1)
def default_rules() -> TrackingRules:
    """The shipped ClearURLs subset plus ``SUPPLEMENT`` (loaded once)."""
    text = resources.files("shared.links").joinpath(RULES_FILE).read_text(encoding="utf-8")
    return TrackingRules.from_clearurls(json.loads(text))
