"""Settings of the archiver: the capture worker's, plus its warm browser."""

from __future__ import annotations

from pydantic import Field

from shared.capture.settings import WorkerSettings

BROWSER_EXECUTABLE = "/usr/bin/chromium-headless-shell"
"""Debian's `chromium-headless-shell`: Chromium without the browser's UI, which in full
headless mode (/usr/bin/chromium) gives every snapshot a window and tab of its own, ~0.15
CPU-s and ~140 MB of the stack's peak on the bench site (docs/benchmarks.md). The archiver
sends its own User-Agent and Playwright's `navigator.webdriver`, so it never passes for a
person either way; what the shell shows a page besides is no PDF viewer (a PDF is downloaded,
services.archiver.pagenavigate.pdf_document), no `navigator.plugins` and no `window.chrome`."""


class ArchiverSettings(WorkerSettings):
    """Settings of one archiver process (capture worker + browser broker)."""

    browser_enabled: bool = Field(
        True, description="Keep a warm Chromium for browser hooks (off: they are skipped)."
    )
    browser_executable: str = Field(
        BROWSER_EXECUTABLE,
        description="The Chromium binary (/usr/bin/chromium: the full browser, see README).",
    )
    browser_max_pss_mb: int = Field(
        1500, ge=100, description="Restart the browser when its process tree's PSS passes this."
    )
    browser_max_renderer_mb: int = Field(
        300,
        ge=0,
        description="Kill a page's renderer past this memory while it loads (MiB, 0: no limit).",
    )
    browser_renderer_check_seconds: float = Field(
        0.5, gt=0, description="How often the renderers' memory is read while snapshots run."
    )
    browser_max_age_seconds: float = Field(
        3600, gt=0, description="Restart the browser after it has run this long."
    )
    browser_max_captures: int = Field(
        1000, ge=1, description="Restart the browser after this many snapshot contexts."
    )
    browser_probe_interval_seconds: float = Field(
        30, gt=0, description="How often the health probe asks the browser for an answer."
    )
    browser_probe_timeout_seconds: float = Field(
        10, gt=0, description="A browser that does not answer the probe in time is restarted."
    )
    browser_viewport_width: int = Field(1280, ge=200, description="Page viewport width (px).")
    browser_viewport_height: int = Field(800, ge=200, description="Page viewport height (px).")
    browser_max_response_mb: int = Field(
        50, ge=1, description="Bytes one browser response may bring before it is cut (MiB)."
    )
    browser_idle_timeout_seconds: float = Field(
        60, gt=0, description="A browser connection silent this long is closed."
    )
    browser_subresource_timeout_seconds: float = Field(
        3,
        gt=0,
        description="A request of the page other than its main document that has no answer"
        " after this long (lookup and connect included) is answered 504 by the egress proxy,"
        " so a host that never answers cannot hold the page's load.",
    )
    browser_warm_origins: int = Field(
        16,
        ge=0,
        description="Origins named by a page's HTML (its scripts, style sheets, images,"
        " frames; never its links) the egress proxy connects to as soon as the document"
        " arrives, before the browser asks: a host that never answers is then known before"
        " the page's images wait on it (0: none).",
    )
    cookies_dir: str = Field(
        "",
        description="Folder of Netscape cookies.txt files named <registrable domain>.txt: a"
        " link's browser context gets its site's cookies (empty: none).",
    )
    browser_warc_max_mb: int = Field(
        100,
        ge=0,
        description="Bytes of bodies the browser WARC of one capture may hold (MiB); a body"
        " past it is kept up to there, marked truncated (0, or TRAFFIC_ENABLED=false: the"
        " browser's traffic is not recorded).",
    )
    browser_extra_ca_file: str | None = Field(
        None,
        description="A PEM file of root certificates the egress proxy trusts beside the"
        " system's when it verifies the servers the browser reaches over HTTPS.",
    )
    browser_max_op_seconds: float = Field(
        600, gt=0, description="Upper bound on any one page operation a hook asks for."
    )
