"""Hook: the rendered page printed to PDF (`page.pdf`, backgrounds included) (step 5)."""

from __future__ import annotations

import sys

from shared import pageclient as pc


def capture(page: pc.PageClient, url: str, timeout: float) -> str:
    out = page.pdf("page.pdf", timeout=timeout)
    return f"page.pdf {out['bytes']} bytes"


if __name__ == "__main__":
    sys.exit(pc.run_page_capture("pdf", capture))
