"""Hook: full-page PNG of the rendered page (`screenshot.png`), height capped and drawn at
SCREENSHOT_SCALE (step 5)."""

from __future__ import annotations

import sys

from shared import pageclient as pc
from shared.hooks.config import hook_settings


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    settings = hook_settings(__file__)
    max_height = int(settings["SCREENSHOT_MAX_HEIGHT"])
    scale = float(settings["SCREENSHOT_SCALE"])
    shot = page.screenshot("screenshot.png", timeout=timeout, max_height=max_height, scale=scale)
    cut = f" (cut from {shot['page_height']} px)" if shot["clipped"] else ""
    scaled = f" (page drawn at {scale:g} scale)" if scale != 1 else ""
    return f"screenshot.png {shot['width']}x{shot['height']}{cut}{scaled}"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("screenshot", capture))
