"""The reader view's images through a real archiver: the browser loads the page through the
egress proxy (its traffic kept as the browser WARC), and the readable hook takes the images
the page showed from that WARC instead of asking the site again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
PNG = b"\x89PNG\r\n\x1a\n" + bytes(300)
PARAS = [
    "The harbour wall gave way during the spring tide and the fishing boats were moved to "
    "the inner basin while engineers from the county inspected the damage at first light.",
    "Shopkeepers on the quay stacked sandbags against their doors and the lifeboat crew "
    "stayed on watch through the night until the water finally went down before dawn.",
    "The council said repairs would take most of the summer and asked visitors to keep to "
    "the marked paths along the cliff until the work on the old wall has been finished.",
]


ASKED: list[object] = []
"""The site's image requests."""


@pytest.fixture(scope="module")
def site() -> Iterator[FixtureServer]:

    def image(request: object) -> Reply:
        ASKED.append(request)
        return Reply(PNG, headers={"Content-Type": "image/png"})

    page = (
        "<html><head><title>Harbour wall</title></head><body><article><h1>Harbour wall</h1>"
        '<figure><img src="/img/wall.png" alt="the wall"></figure>'
        + "".join(f"<p>{p}</p>" for p in PARAS)
        + "</article></body></html>"
    )
    with FixtureServer() as s:
        s.routes["/story"] = Reply(page.encode(), headers={"Content-Type": "text/html"})
        s.routes["/img/wall.png"] = image
        yield s


async def test_the_reader_views_image_is_the_one_the_browser_loaded(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    seen = await run_hooks(
        browser, f"{site.base}/story", tmp_path, ["navigate", "dom", "traffic", "readable"]
    )
    assert seen.final["traffic"].status == "succeeded", seen.final["traffic"].output_str
    assert seen.final["readable"].status == "succeeded", seen.final["readable"].output_str
    out = tmp_path / "readable"
    assert (out / "images" / "1.png").read_bytes() == PNG
    assert 'src="images/1.png"' in (out / "article.html").read_text()
    assert json.loads((out / "readable.json").read_text())["images"] == 1
    assert len(ASKED) == 1, "the site was asked for the image by the browser alone"
