"""Hook: load the link in the snapshot's browser page (step 2, before every DOM capture).

Writes `navigate.json`: the URL asked for, final URL, HTTP status, response headers,
redirect chain, whether a document loaded, what the target policy refused and what the
egress proxy could not reach (`failed`), the page's response log and events so far, and how
many of the page's own requests failed (`subresources`, `failed_subresources`: an ad server
that does not answer is counted there and in the result's summary, and fails nothing).
When a probe after the navigation fails (the meta tags or the wall check of a page whose
scripts hang), the navigation record is still written, with the probe's `probe_error`.
Prints a Snapshot record with the final URL. A loaded page is then waited for until it
settles (NAVIGATE_SETTLE_MS, NAVIGATE_QUIET_MS; the archiver's `settle` operation), so what
a script renders after the load event is in every later capture; navigate.json's `settle`
says whether it did and how long it took.

    Whether a failure is retried is its code's (shared.hooks.error_codes); the exit code (1
    for a retried one) says the same and decides nothing.

    2xx/3xx                            succeeded
    4xx                                failed, soft  E_NAVIGATE_HTTP_<status> (408, 425 and
                                                     429 retried; a 429 backs off the domain)
    5xx                                failed, hard  E_NAVIGATE_HTTP_5XX (retried)
    refused target, a host name that does not exist, download, too many redirects, body over
    the cap, the page's renderer past the archiver's memory limit (BROWSER_MAX_RENDERER_MB: it
    was stopped)
                                       failed, soft  E_NAVIGATE_REFUSED / _NO_HOST / _DOWNLOAD
                                                     / _REDIRECTS / _TOO_LARGE /
                                                     _RESOURCE_LIMIT
    timeout, network error, browser,   failed, hard  E_NAVIGATE_TIMEOUT / _FAILED / _BROWSER
    no DNS answer for now                            / _DNS
    the document's body broke off      failed, hard  E_NAVIGATE_TRUNCATED (retried; the page
    (the server closed early)                        captures that read navigate are skipped)
    no browser (not in an archiver)    skipped       E_NAVIGATE_NO_BROWSER
    a login wall, consent gate or bot challenge instead of the page (shared.content.walls;
    the captures still run, as evidence of what was served)
                                       partial       E_NAVIGATE_LOGIN_WALL / _CONSENT_WALL /
                                                     _BLOCKED; E_NAVIGATE_LOGGED_OUT when the
                                                     context held the operator's cookies for
                                                     the site (COOKIES_DIR: the session expired)
    the page opts out (X-No-Archive header on the main document, or the meta tag in the
    rendered page)                     failed, soft  E_NAVIGATE_DECLINED, nothing written
                                                     (unless NAVIGATE_RESPECT_NO_ARCHIVE=false,
                                                     which falls back to FETCH_RESPECT_NO_ARCHIVE);
                                                     the page captures reading navigate are
                                                     then skipped by the runner
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from shared import pageclient as pc
from shared.content.no_archive import declined_by_headers, declined_by_html
from shared.content.walls import SIGNALS_JS, PageSignals, Wall, classify
from shared.fetching import retry_after as retry_wait
from shared.hooks.config import hook_settings
from shared.hooks.error_codes import LOGIN_REASONS, What, code, http_code, retry_worthy
from shared.hooks.records import ArchiveResultRecord, SnapshotRecord, emit

META_TAGS = "() => Array.from(document.querySelectorAll('meta'), m => m.outerHTML).join('\\n')"
"""The rendered page's meta tags, for declined_by_html."""


def outcome(nav: dict[str, Any]) -> tuple[Literal["succeeded", "failed"], str | None]:
    """(status, error_code) of a navigation record; whether it is retried is the code's
    (shared.hooks.error_codes)."""
    error = nav.get("error") or {}
    code, message, status = error.get("code"), error.get("message", ""), nav.get("status")
    if code == pc.E_REFUSED:
        return "failed", "E_NAVIGATE_REFUSED"
    if code == pc.E_DOWNLOAD:
        return "failed", "E_NAVIGATE_DOWNLOAD"
    if code == pc.E_RESOURCE_LIMIT:
        return "failed", "E_NAVIGATE_RESOURCE_LIMIT"
    if code == pc.E_NAVIGATION and "ERR_TOO_MANY_REDIRECTS" in message:
        return "failed", "E_NAVIGATE_REDIRECTS"
    if nav.get("truncated"):
        return "failed", "E_NAVIGATE_TOO_LARGE"
    if code == pc.E_TRUNCATED:
        return "failed", "E_NAVIGATE_TRUNCATED"
    if code == pc.E_TIMEOUT:
        return "failed", "E_NAVIGATE_TIMEOUT"
    if code == pc.E_DNS:
        return "failed", "E_NAVIGATE_DNS"
    if code == pc.E_NO_HOST:
        return "failed", "E_NAVIGATE_NO_HOST"
    if code is not None:
        return "failed", "E_NAVIGATE_FAILED"
    if status is not None and status >= 400:
        return "failed", http_code("NAVIGATE", status)
    return "succeeded", None


def declined(
    page: pc.PageClient, nav: dict[str, Any], timeout: float, html: bool = True
) -> str | None:
    """Why the loaded page asks not to be archived (X-No-Archive), or None; its meta tags
    are read only when it is an HTML page (`html`)."""
    if not nav.get("document") or nav.get("error"):
        return None
    why = declined_by_headers(nav.get("headers") or [])
    if why is None and html:
        why = declined_by_html(meta_tags(page, timeout))
    return why


def meta_tags(page: pc.PageClient, timeout: float) -> bytes:
    """The rendered page's meta tags; its whole DOM when the page's own scripts broke the
    script that lists them (a page may replace `document.querySelectorAll`)."""
    try:
        return str(page.evaluate(META_TAGS, timeout=timeout) or "").encode()
    except pc.PageError as exc:
        if exc.code != pc.E_SCRIPT:
            raise
    dom = Path(page.content("meta-check.html", timeout=timeout)["path"])
    try:
        return dom.read_bytes()
    finally:
        dom.unlink()


WALL_CODES: dict[str, What] = {
    "login_wall": "LOGIN_WALL",
    "consent_wall": "CONSENT_WALL",
    "blocked": "BLOCKED",
}


def wall_of(page: pc.PageClient, nav: dict[str, Any], url: str, timeout: float) -> Wall | None:
    """The wall the loaded page is, if it is one (a page of an error status is not asked)."""
    status = nav.get("status")
    if not nav.get("document") or nav.get("error") or (isinstance(status, int) and status >= 400):
        return None
    try:
        found = page.evaluate(SIGNALS_JS, timeout=timeout)
    except pc.PageError as exc:
        if exc.code != pc.E_SCRIPT:
            raise
        return None  # the page's own scripts broke the probe: not a wall's doing
    return classify(PageSignals.of(found), url) if isinstance(found, dict) else None


def wall_code(wall: Wall, nav: dict[str, Any]) -> str:
    """The code of a wall: LOGGED_OUT when the context held the site's cookies."""
    if wall.reason in LOGIN_REASONS and (nav.get("cookies") or {}).get("count"):
        return code("NAVIGATE", "LOGGED_OUT")
    return code("NAVIGATE", WALL_CODES[wall.reason])


RECORD_RESERVE_S = (1.0, 4.0)
"""The least and the most of the hook's time kept, out of the navigate operation's, to fetch
what the archiver recorded of a navigation it cut short (`cut_short_record`) and write it."""


def record_reserve_s(timeout: float) -> float:
    """The seconds kept after the navigate operation: an eighth of the hook's, within
    RECORD_RESERVE_S (never all of it)."""
    least, most = RECORD_RESERVE_S
    return min(timeout / 2, most, max(least, timeout / 8))


def cut_short_record(page: pc.PageClient, timeout: float) -> dict[str, Any] | None:
    """What the archiver kept of a navigation whose operation ran out of time (on a loaded
    machine the renderer probe and the description may take longer than the operation had
    left): its record (the navigation as far as it went, its error) and the page's log and
    events, so navigate.json and its `page_unresponsive` event are not lost."""
    try:
        nav = page.state(timeout=timeout).get("navigation")
        if not isinstance(nav, dict):
            return None
        return {**nav, **page.responses(timeout=timeout)}
    except pc.PageError as exc:
        print(f"navigate: the cut-short navigation's record: {exc}", file=sys.stderr)
        return None


def main() -> int:
    url, timeout = pc.hook_args()
    reserve = record_reserve_s(timeout)
    settings = hook_settings(__file__)
    wait_until = str(settings["NAVIGATE_WAIT_UNTIL"])
    settle_ms = int(settings["NAVIGATE_SETTLE_MS"])
    quiet_ms = int(settings["NAVIGATE_QUIET_MS"])
    respect = bool(settings["NAVIGATE_RESPECT_NO_ARCHIVE"])
    why: str | None = None
    nav: dict[str, Any] | None = None
    try:
        with pc.PageClient() as page:
            try:
                nav = page.navigate(url, timeout=timeout - reserve, wait_until=wait_until)
            except pc.PageError as exc:
                if exc.code != pc.E_TIMEOUT:
                    raise
                kept = cut_short_record(page, reserve / 2)
                if kept is not None:
                    Path("navigate.json").write_text(json.dumps(kept, indent=1))
                raise
            # a PDF has no page to settle, meta tags or a wall (the headless shell has no
            # viewer for it: its page stays blank); its headers may still decline
            html = nav.get("document") and pc.document_type(nav) != "application/pdf"
            if settle_ms and html and not nav.get("error"):
                left = max(0.5, timeout - float(nav.get("elapsed_s") or 0) - 0.5)
                nav["settle"] = page.settle(timeout=left, max_ms=settle_ms, quiet_ms=quiet_ms)
            log = page.responses()
            if respect:
                why = declined(page, nav, timeout, html=bool(html))
            wall = wall_of(page, nav, url, timeout) if why is None and html else None
    except pc.PageError as exc:
        print(f"navigate: {exc}", file=sys.stderr)
        if nav is not None:  # a probe after the navigation failed: keep what the page did
            probe = {"code": exc.code, "message": exc.message[:500]}
            Path("navigate.json").write_text(json.dumps({**nav, "probe_error": probe}, indent=1))
        if exc.code == pc.E_NO_BROWSER:
            emit(ArchiveResultRecord(status="skipped", output_str=exc.message,
                                     error_code="E_NAVIGATE_NO_BROWSER"))  # fmt: skip
            return 0
        if exc.code == pc.E_RESOURCE_LIMIT:  # killed while it settled, after its navigation
            emit(ArchiveResultRecord(status="failed", output_str=exc.message[:500],
                                     error_code="E_NAVIGATE_RESOURCE_LIMIT"))  # fmt: skip
            return 0
        code = "E_NAVIGATE_TIMEOUT" if exc.code == pc.E_TIMEOUT else "E_NAVIGATE_BROWSER"
        emit(ArchiveResultRecord(status="failed", output_str=exc.message[:500], error_code=code))
        return 1
    if why is not None:
        output = f"declined: the page asks not to be archived ({why})"
        print(f"navigate: {output}", file=sys.stderr)
        emit(ArchiveResultRecord(status="failed", output_str=output,
                                 error_code="E_NAVIGATE_DECLINED"))  # fmt: skip
        return 0
    if wall is not None:
        nav["wall"] = {"reason": wall.reason, "why": wall.why}
    Path("navigate.json").write_text(json.dumps({**nav, **log}, indent=1))
    if nav.get("final_url"):
        logged_in = bool((nav.get("cookies") or {}).get("count")) or None
        emit(SnapshotRecord(final_url=nav["final_url"], logged_in=logged_in))
    if wall is not None:
        ending = wall_code(wall, nav)
        print(f"navigate: {ending}: {wall.why}", file=sys.stderr)
        emit(ArchiveResultRecord(status="partial", output_str=wall.why[:500], error_code=ending))
        return 0
    status, error_code = outcome(nav)
    error = nav.get("error") or {}
    summary = f"HTTP {nav.get('status')} {nav.get('final_url')}"
    failed = int(log.get("failed_subresources") or 0)
    if failed:  # first: the link page shows the start of a summary
        summary = f"{failed} of {log.get('subresources')} page resources not loaded · {summary}"
    if error:
        summary = f"{error.get('code')}: {error.get('message')}"[:500]
    asks = status == "failed" and nav.get("status") in retry_wait.WAITING_STATUSES
    wait = retry_wait.of_headers(nav.get("headers") or []) if asks else None
    if wait is not None:
        summary += f"; it asks to wait {wait:.0f} s"
    emit(ArchiveResultRecord(status=status, output_str=summary, error_code=error_code,
                             retry_after_s=wait))  # fmt: skip
    return 1 if status == "failed" and retry_worthy(error_code) else 0


if __name__ == "__main__":
    sys.exit(main())
