"""The adjustment hooks on a real archiver browser page: banners closed, lazy content loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
PAGE = b"""<html><body style="overflow:hidden">
<div id="cookie-consent" style="position:fixed;bottom:0;left:0;right:0;height:200px;z-index:999">
  We use cookies <button onclick="document.getElementById('cookie-consent').remove();
  document.title='accepted'">Accept all</button></div>
<div class="modal-backdrop" style="position:fixed;inset:0;z-index:1000;background:#0008"></div>
<div style="height:4000px">long</div>
<div id="end"></div>
<script>
new IntersectionObserver((es) => { if (es[0].isIntersecting) {
  const img = document.createElement('img'); img.src = '/lazy.png'; document.body.append(img); }
}).observe(document.getElementById('end'));
</script></body></html>"""


async def test_dismisses_overlays_and_scrolls_lazy_content_in(
    browser: BrowserHarness, tmp_path: Path
) -> None:
    with FixtureServer() as site:
        site.routes["/p"] = Reply(PAGE)
        site.routes["/lazy.png"] = Reply(b"", 204)
        seen = await run_hooks(
            browser, f"{site.base}/p", tmp_path, ["navigate", "adjust", "dom"],
            ADJUST_SCROLL_STEP_MS="50",
        )  # fmt: skip
        lazy_requested = any(path == "/lazy.png" for path, _ in site.requests)
    dismiss = seen.final["adjust"]
    assert dismiss.status == "succeeded", dismiss
    assert dismiss.output_str.startswith("clicked 1, removed ")
    scroll = seen.final["adjust/on_Snapshot__32_scroll.py"]
    assert scroll.status == "succeeded" and "reached the bottom" in scroll.output_str, scroll
    assert lazy_requested
    html = (tmp_path / "dom" / "dom.html").read_text()
    assert "cookie-consent" not in html and "modal-backdrop" not in html
    assert "<title>accepted</title>" in html
