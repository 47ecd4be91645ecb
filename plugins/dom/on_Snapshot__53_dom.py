"""Hook: the rendered DOM serialised as UTF-8 HTML (`dom.html`) (step 5)."""

from __future__ import annotations

import sys

from shared import pageclient as pc


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    out = page.content("dom.html", timeout=timeout)
    return f"dom.html {out['bytes']} bytes"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("dom", capture))
