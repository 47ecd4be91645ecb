"""The dom hook on a real archiver browser page: the DOM after scripts ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
SCRIPTED = (
    "<html><head><title>t</title></head><body><div id=root></div>"
    "<script>document.getElementById('root').innerHTML = '<p>made by script \u00e9</p>'</script>"
    "</body></html>"
).encode()


async def test_writes_the_rendered_dom(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/s"] = Reply(SCRIPTED, headers={"Content-Type": "text/html; charset=utf-8"})
        seen = await run_hooks(browser, f"{site.base}/s", tmp_path, ["navigate", "dom"])
    assert seen.final["dom"].status == "succeeded", seen.final["dom"]
    html = (tmp_path / "dom" / "dom.html").read_text("utf-8")
    assert '<div id="root"><p>made by script \u00e9</p></div>' in html
