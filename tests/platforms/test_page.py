"""The browser step: the post from the rendered page's own description; a wall is not."""

from __future__ import annotations

from shared.platforms.page import from_page
from shared.platforms.x import recognise
from testkit.platform_pages import LOGIN_PAGE

URL = "https://x.com/ada_example/status/1790000000000000001"
PAGE = """<html><head><title>Ada Example on X: "Reading about archives today" / X</title>
<meta property="og:title" content="Ada Example on X: &quot;Reading about archives today&quot;">
<meta property="og:description" content="Reading about archives today https://example.org/archives/why">
<meta property="og:image" content="https://pbs.twimg.com/media/x.png"></head>
<body><article data-testid="tweet"><p>Reading about archives today</p></article></body></html>"""


def test_the_post_from_the_rendered_page() -> None:
    ref = recognise(URL)
    assert ref is not None
    outcome = from_page(ref, PAGE, URL, 200)
    post = outcome.post
    assert outcome.verdict == "present" and post is not None and post.source == "browser"
    assert post.author.name == "Ada Example" and post.author.handle == "ada_example"
    assert post.text == "Reading about archives today https://example.org/archives/why"
    assert post.media[0].url == "https://pbs.twimg.com/media/x.png"


def test_a_wall_or_an_error_page_is_no_post() -> None:
    ref = recognise(URL)
    assert ref is not None
    wall = from_page(ref, LOGIN_PAGE, "https://x.com/i/flow/login", 200)
    assert (wall.verdict, wall.evidence.reason) == ("unknown", "login_wall")
    assert from_page(ref, PAGE, URL, 404).verdict == "unknown"
    assert (
        from_page(ref, "<html><body><p>nothing</p></body></html>", URL, 200).evidence.reason
        == "no_post"
    )
