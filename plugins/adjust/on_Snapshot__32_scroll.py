"""Hook: scroll the loaded page to the bottom, a viewport at a time, so lazy images and
infinite lists load, then back to the top (step 3). Bounded by ADJUST_SCROLL_MAX_SECONDS
and ADJUST_SCROLL_MAX_STEPS. With ADJUST_SCROLL_WHEN=lazy (the default) only a page that
loads content lazily is scrolled (the archiver's `lazy` operation says which)."""

from __future__ import annotations

import sys
from pathlib import Path

from shared import pageclient as pc
from shared.hooks.config import hook_settings

SCROLL_JS = (Path(__file__).parent / "scroll.js").read_text()


def loads_lazily(page: pc.PageClient) -> bool:
    """Whether the page shows lazy loading (the archiver's `lazy` operation); a page whose
    scripts broke the check (E_PAGE_SCRIPT) is scrolled, to be safe."""
    try:
        return any(page.lazy().values())
    except pc.PageError as exc:
        if exc.code != pc.E_SCRIPT:
            raise
        return True


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    settings = hook_settings(__file__)
    max_s = float(settings["ADJUST_SCROLL_MAX_SECONDS"])
    max_steps = int(settings["ADJUST_SCROLL_MAX_STEPS"])
    step_ms = int(settings["ADJUST_SCROLL_STEP_MS"])
    budget_ms = int(min(max_s, max(0.0, timeout - 1)) * 1000)
    if budget_ms <= 0 or max_steps <= 0:
        return "scrolling off"
    if settings["ADJUST_SCROLL_WHEN"] == "lazy" and not loads_lazily(page):
        return "not scrolled: nothing on the page loads lazily"
    done = page.evaluate(SCROLL_JS, [budget_ms, max_steps, step_ms], timeout=timeout)
    end = "reached the bottom" if done["bottom"] else "stopped early"
    return f"{done['steps']} steps, {done['height']} px, {end} in {done['ms']} ms"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("adjust", capture))
