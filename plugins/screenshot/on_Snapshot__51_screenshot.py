"""Hook: full-page PNG of the rendered page (`screenshot.png`), height capped (step 5)."""

from __future__ import annotations

import sys

from shared import pageclient as pc
from shared.hooks.config import hook_settings


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    max_height = int(hook_settings(__file__)["SCREENSHOT_MAX_HEIGHT"])
    shot = page.screenshot("screenshot.png", timeout=timeout, max_height=max_height)
    cut = f" (cut from {shot['page_height']} px)" if shot["clipped"] else ""
    return f"screenshot.png {shot['width']}x{shot['height']}{cut}"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("screenshot", capture))
