"""Hook: close cookie banners and modal overlays in the loaded page (step 3).

Clicks an "accept"/"agree"/"close" button inside elements that look like consent banners or
dialogs, then removes what still covers the page (fixed or sticky, high z-index, a large
share of the viewport) and gives scrolling back to the body. Prints what it did.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shared import pageclient as pc

DISMISS_JS = (Path(__file__).parent / "dismiss.js").read_text()


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    done = page.evaluate(DISMISS_JS, timeout=timeout)
    return f"clicked {done['clicked']}, removed {done['removed']} overlays"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("adjust", capture))
