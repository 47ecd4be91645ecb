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


LONG = "<div style='height:4000px'>long</div><div id='end'>end</div>"
SCROLL_LOADER = f"""<html><body>{LONG}<script>
window.addEventListener('scroll', () => {{
  if (window.scrollY + innerHeight >= document.body.scrollHeight - 10 && !window.done) {{
    window.done = true; const img = document.createElement('img'); img.src = '/lazy.png';
    document.body.append(img); }}
}});
document.title = IntersectionObserver.prototype.observe.toString().includes('[native code]')
  && EventTarget.prototype.addEventListener.toString().includes('[native code]')
  ? 'native' : 'wrapped';
</script></body></html>"""
NATIVE_LAZY = f"<html><body>{LONG}<img loading='lazy' src='/lazy.png' width=10 height=10>"
STATIC = f"<html><body>{LONG}<img src='/plain.png' width=10 height=10></body></html>"
BREAKS_CHECK = STATIC.replace(
    "</body>", "<script>document.querySelectorAll = () => { throw Error('no'); }</script></body>"
)


@pytest.mark.parametrize(
    ("page", "when", "scrolled", "loads"),
    [
        (SCROLL_LOADER, "lazy", True, True),
        (NATIVE_LAZY, "lazy", True, True),
        (STATIC, "lazy", False, False),
        (STATIC, "always", True, False),
        (BREAKS_CHECK, "lazy", True, False),
    ],
    ids=["scroll-listener", "loading-lazy", "static", "static-always", "check-broken"],
)
async def test_scrolls_only_a_page_that_loads_lazily(
    browser: BrowserHarness, tmp_path: Path, page: str, when: str, scrolled: bool, loads: bool
) -> None:
    with FixtureServer() as site:
        site.routes["/p"] = Reply(page.encode())
        site.routes["/lazy.png"] = Reply(b"", 204)
        site.routes["/plain.png"] = Reply(b"", 204)
        seen = await run_hooks(
            browser, f"{site.base}/p", tmp_path, ["navigate", "adjust", "dom"],
            ADJUST_SCROLL_STEP_MS="50", ADJUST_SCROLL_WHEN=when,
        )  # fmt: skip
        lazy_requested = any(path == "/lazy.png" for path, _ in site.requests)
    scroll = seen.final["adjust/on_Snapshot__32_scroll.py"]
    assert scroll.status == "succeeded", scroll
    if scrolled:
        assert "reached the bottom" in scroll.output_str, scroll
    else:
        assert scroll.output_str == "not scrolled: nothing on the page loads lazily", scroll
    assert lazy_requested == loads
    if page is SCROLL_LOADER:  # the watch leaves the functions native to the page's eyes
        assert "<title>native</title>" in (tmp_path / "dom" / "dom.html").read_text()


async def test_the_lazy_image_needs_the_scroll(browser: BrowserHarness, tmp_path: Path) -> None:
    """The fixture's lazy image is out of the browser's own reach without scrolling."""
    with FixtureServer() as site:
        site.routes["/p"] = Reply(NATIVE_LAZY.encode())
        site.routes["/lazy.png"] = Reply(b"", 204)
        seen = await run_hooks(
            browser, f"{site.base}/p", tmp_path, ["navigate", "adjust", "dom"],
            ADJUST_SCROLL_MAX_SECONDS="0",
        )  # fmt: skip
        assert seen.final["adjust/on_Snapshot__32_scroll.py"].output_str == "scrolling off"
        assert not any(path == "/lazy.png" for path, _ in site.requests)
