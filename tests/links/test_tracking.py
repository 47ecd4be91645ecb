"""Tracking-parameter rules: the shipped ClearURLs subset and the engine."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from shared.links.canonical import CanonicalUrl, canonicalize
from shared.links.tracking import RULES_FILE, TrackingRules, default_rules
from testkit.link_corpus import URLS, load_json
from tests.links import gen_clearurls


def test_shipped_rules_match_the_generator_output() -> None:
    """clearurls_rules.json is exactly what tests/links/gen_clearurls.py makes from the corpora."""
    data = load_json(URLS / "clearurls" / "data.min.json")
    shipped = resources.files("shared.links").joinpath(RULES_FILE).read_text(encoding="utf-8")
    assert shipped == gen_clearurls.render(data)


def test_shipped_rules_carry_provenance_and_load() -> None:
    text = resources.files("shared.links").joinpath(RULES_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["source"]["license"] == "LGPL-3.0"
    assert data["source"]["repo"] == "ClearURLs/Rules"
    assert len(data["providers"]) >= 100
    assert resources.files("shared.links").joinpath("CLEARURLS-LICENSE.txt").is_file()
    assert len(default_rules().providers) >= 100


# (url, normalized): parameters from the rule list (issue: utm_*, fbclid, gclid, si, igshid)
STRIP: list[tuple[str, str]] = [
    (
        "https://a.example/?utm_source=x&utm_medium=y&utm_campaign=z&utm_term=t&utm_content=c&k=1",
        "https://a.example/?k=1",
    ),
    ("https://a.example/?fbclid=1&k=1", "https://a.example/?k=1"),
    ("https://a.example/?gclid=1&k=1", "https://a.example/?k=1"),
    ("https://a.example/?msclkid=1&dclid=2&yclid=3&_ga=4&mc_eid=5", "https://a.example/"),
    (
        "https://a.example/?UTM_SOURCE=x",
        "https://a.example/",
    ),  # ClearURLs matches case-insensitively
    ("https://youtu.be/HQD2cMVuNWk?si=abc", "https://youtu.be/HQD2cMVuNWk"),
    ("https://open.spotify.com/track/1?si=abc", "https://open.spotify.com/track/1"),
    ("https://www.instagram.com/p/X/?igshid=abc", "https://www.instagram.com/p/X/"),
    ("https://www.threads.net/@a/post/X?igshid=abc", "https://www.threads.net/@a/post/X"),
    (
        "https://www.amazon.com/dp/B0?th=1&psc=1&tag=aff-20",
        "https://www.amazon.com/dp/B0?psc=1&tag=aff-20",
    ),
]

KEEP: list[str] = [
    "https://a.example/?si=keep",  # `si` is tracking only on YouTube and Spotify
    "https://a.example/?t=30",  # `t` is tracking on X, a start time elsewhere
    "https://github.com/a/b/blob/x?ref=main",  # referralMarketing rules are not applied
    "https://a.example/?fbclid1=x&xfbclid=y",  # whole-name matches only
    "https://a.example/?q=utm_source",  # values are not names
    "https://accounts.google.com/o/oauth2/auth?source=x",  # ClearURLs exception
]


@pytest.mark.parametrize(("url", "normalized"), STRIP)
def test_tracking_parameters_are_stripped(url: str, normalized: str) -> None:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl)
    assert c.normalized == normalized


@pytest.mark.parametrize("url", KEEP)
def test_other_parameters_are_kept(url: str) -> None:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl)
    assert c.normalized == url


def test_engine_from_names_is_case_sensitive_and_exact() -> None:
    rules = TrackingRules.from_names(["gclid", "a.b"])
    pairs: list[tuple[str, str | None]] = [
        ("gclid", "1"),
        ("GCLID", "2"),
        ("axb", "3"),
        ("a.b", None),
    ]
    assert rules.strip("http://h/", "http://h/", pairs) == [("GCLID", "2"), ("axb", "3")]


def test_engine_matches_percent_encoded_names() -> None:
    rules = default_rules()
    assert rules.strip("https://h.example/", "https://h.example/", [("utm%5Fsource", "x")]) == []
