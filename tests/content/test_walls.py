"""Login walls, consent gates and challenges, per platform and in general; saved real
platform pages (when the corpora are present) that show their post are no wall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.content.walls import PageSignals, classify, is_login_url, wall_in_html
from testkit.platform_pages import LOGIN_PAGE

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "platforms"
ARTICLE = "<p>" + "A paragraph of an ordinary article about harbours and boats. " * 60 + "</p>"


def test_a_page_that_is_mostly_a_sign_in_form() -> None:
    wall = wall_in_html("https://example.org/members", LOGIN_PAGE)
    assert wall is not None and wall.reason == "login_wall" and "sign-in form" in wall.why


def test_an_article_with_a_login_box_in_its_sidebar_is_no_wall() -> None:
    html = (
        f"<html><body><article>{ARTICLE}</article><aside><form><input name=u>"
        "<input type=password name=p><button>Log in</button></form></aside></body></html>"
    )
    assert wall_in_html("https://example.org/a", html) is None


@pytest.mark.parametrize(
    ("final", "asked", "reason"),
    [
        (
            "https://www.instagram.com/accounts/login/?next=/p/x/",
            "https://www.instagram.com/p/x/",
            "login_wall",
        ),
        (
            "https://x.com/i/flow/login?redirect_after_login=%2Fa%2Fstatus%2F1",
            "https://x.com/a/status/1",
            "login_wall",
        ),
        (
            "https://www.tiktok.com/login?redirect_url=x",
            "https://www.tiktok.com/@a/video/1",
            "login_wall",
        ),
        (
            "https://consent.youtube.com/m?continue=x",
            "https://www.youtube.com/watch?v=x",
            "consent_wall",
        ),
        (
            "https://www.facebook.com/login/?next=x",
            "https://www.facebook.com/page/posts/1",
            "login_wall",
        ),
    ],
)
def test_platform_redirects(final: str, asked: str, reason: str) -> None:
    wall = wall_in_html(
        final, "<html><head><title>x</title></head><body><p>hi</p></body></html>", asked
    )
    assert wall is not None and wall.reason == reason


def test_a_link_to_a_login_page_itself_is_not_a_wall_for_being_one() -> None:
    assert (
        wall_in_html(
            "https://example.org/login", f"<body>{ARTICLE}</body>", "https://example.org/login"
        )
        is None
    )
    assert is_login_url("https://example.org/login?x=1") and not is_login_url(
        "https://example.org/blog/login-tips"
    )


def test_platform_shells_and_challenges() -> None:
    x_shell = PageSignals(
        "https://x.com/a/status/1",
        "X",
        "Don’t miss what’s happening. People on X are the first to know. Log in Sign up",
        90,
        0,
        0,
    )
    wall = classify(x_shell, "https://x.com/a/status/1")
    assert wall is not None and wall.reason == "login_wall"
    shown = PageSignals(
        x_shell.url, "A on X", x_shell.text + " the post itself", 900, 0, 0, articles=1
    )
    assert classify(shown, x_shell.url) is None  # X's banner over a post it shows
    cf = PageSignals("https://example.org/", "Just a moment...", "Checking your browser", 40, 0, 0)
    assert (classify(cf) or pytest.fail()).reason == "blocked"
    js = PageSignals.of(
        {
            "url": "https://e/",
            "title": "Sign in",
            "text": "Sign in",
            "text_chars": 7,
            "password_inputs": "odd",
            "form_text_chars": None,
        }
    )
    assert js.password_inputs == 0 and (classify(js) or pytest.fail()).reason == "login_wall"


@pytest.mark.skipif(not CORPORA.is_dir(), reason="corpora absent")
def test_saved_platform_pages_showing_their_post_are_no_wall() -> None:
    seen = 0
    for cases in sorted(CORPORA.glob("*/cases.json")):
        for case in json.loads(cases.read_text()).get("cases", []):
            page = cases.parent / case["fixture"]
            if page.suffix == ".html" and page.is_file():
                seen += 1
                assert wall_in_html(case["url"], page.read_text(errors="replace")) is None, page
    assert seen >= 15
