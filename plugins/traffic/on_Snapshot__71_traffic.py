"""Hook (step 7): the browser's own traffic of the snapshot as `browser.warc.gz` (kind `warc`).

Asks the archiver over the page socket (`traffic` op) to finish the WARC its egress proxy
wrote while the page loaded and was captured (services/archiver/egress/traffic.py) and to put it
in this hook's folder; the worker uploads it like any artifact. Step 7 comes after every
page capture (they can still load images) and before post-processing, which never uses the
browser.

    written                         succeeded ("N exchanges, M truncated")
    navigate did not succeed        skipped    E_TRAFFIC_DEPENDENCY (the runner: it reads
                                               navigate, as the page captures do, so a dead
                                               page's traffic never makes its capture count)
    nothing recorded (no request    skipped
    went out, or the archiver
    records none: BROWSER_WARC_MAX_MB=0)
    no browser (not in an archiver) skipped    E_TRAFFIC_NO_BROWSER
    the archiver failed             failed, hard  E_TRAFFIC_FAILED / _TIMEOUT
"""

from __future__ import annotations

import sys
from pathlib import Path

from shared import pageclient as pc
from shared.hooks.records import ArchiveResultRecord, emit


def main() -> int:
    _, timeout = pc.hook_args()
    try:
        with pc.PageClient() as page:
            result = page.traffic(str(Path("browser.warc.gz").resolve()), timeout=timeout)
    except pc.PageError as exc:
        print(f"traffic: {exc}", file=sys.stderr)
        if exc.code == pc.E_NO_BROWSER:
            emit(ArchiveResultRecord(status="skipped", output_str=exc.message,
                                     error_code="E_TRAFFIC_NO_BROWSER"))  # fmt: skip
            return 0
        code = "E_TRAFFIC_TIMEOUT" if exc.code == pc.E_TIMEOUT else "E_TRAFFIC_FAILED"
        emit(ArchiveResultRecord(status="failed", output_str=exc.message[:500], error_code=code))
        return 1
    if not result.get("path"):
        emit(ArchiveResultRecord(status="skipped", output_str="no browser traffic recorded"))
        return 0
    emit(
        ArchiveResultRecord(
            status="succeeded",
            output_str=f"browser.warc.gz: {result['exchanges']} exchanges,"
            f" {result['truncated']} truncated, {result['bytes']} bytes",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
