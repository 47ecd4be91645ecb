"""Hook: full-page PNG of the rendered page (`screenshot.png`), height capped (step 5)."""

from __future__ import annotations

import os
import sys

from shared import pageclient as pc


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    max_height = int(os.environ.get("SCREENSHOT_MAX_HEIGHT", "16000"))
    shot = page.screenshot("screenshot.png", timeout=timeout, max_height=max_height)
    cut = f" (cut from {shot['page_height']} px)" if shot["clipped"] else ""
    return f"screenshot.png {shot['width']}x{shot['height']}{cut}"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("screenshot", capture))
