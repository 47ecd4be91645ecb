"""visible_html: what the page hides is not part of its article."""

from __future__ import annotations

from shared.content.article import page_text
from shared.content.visible import visible_html

ARTICLE = "<p>" + "The visible article text goes on for a while. " * 20 + "</p>"


def text(html: str) -> str:
    return page_text(visible_html(html))


def test_hidden_elements_are_removed():
    html = (
        f"<html><body>{ARTICLE}"
        '<div hidden>hidden attribute</div><p style="color:red; display : none">inline none</p>'
        '<p style="visibility:hidden">invisible</p><nav aria-hidden="true">aria menu</nav>'
        '<div hidden="until-found">found by search</div>'
        '<p style="display:block">shown</p></body></html>'
    )
    out = text(html)
    for gone in ("hidden attribute", "inline none", "invisible", "aria menu"):
        assert gone not in out
    assert "found by search" in out and "shown" in out and "visible article" in out


def test_a_page_with_nothing_hidden_is_returned_as_is():
    html = f"<html><body>{ARTICLE}</body></html>"
    assert visible_html(html) is html
    assert visible_html("") == ""
    # all of its text hidden: that text is still the page's (see the next test)
    assert visible_html("<p hidden>only hidden</p>") == "<p hidden>only hidden</p>"


def test_a_hidden_element_holding_most_of_the_page_is_kept():
    # a modal open over the page (aria-hidden on the app root), an anti-flicker wrapper
    for wrapper in ('<div id="app" aria-hidden="true">', '<div style="display:none">'):
        html = (
            f"<html><body>{wrapper}{ARTICLE}<span hidden>tracking</span></div>"
            "<div role='dialog'>Accept cookies?</div></body></html>"
        )
        out = text(html)
        assert "visible article" in out and "Accept cookies" in out
        assert "tracking" not in out  # what the kept wrapper hides itself still goes
