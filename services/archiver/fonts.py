"""Which writing systems the capture browser has no font for.

Chromium draws text with the machine's fonts (fontconfig). A page in a script no installed
font covers is screenshotted and printed as rows of empty boxes, and nothing else says so:
the capture succeeds. The archiver asks fontconfig once at its start, logs a warning naming
the scripts and the Debian packages that draw them, and lists them in its /healthz
(`fonts_missing`). The worker image and `make up` install these packages
(Dockerfile.worker, deploy/install-system-deps.sh).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Script:
    """A writing system, how fontconfig is asked for it, and the package that covers it."""

    name: str
    query: str
    """fontconfig's pattern: `:lang=xx` (a font covering the language), or `:charset=hex`."""
    package: str


SCRIPTS = (
    Script("Chinese", ":lang=zh-cn", "fonts-noto-cjk"),
    Script("Japanese", ":lang=ja", "fonts-noto-cjk"),
    Script("Korean", ":lang=ko", "fonts-noto-cjk"),
    Script("Arabic", ":lang=ar", "fonts-noto-core"),
    Script("Hebrew", ":lang=he", "fonts-noto-core"),
    Script("Devanagari", ":lang=hi", "fonts-noto-core"),
    Script("Thai", ":lang=th", "fonts-noto-core"),
    Script("Cyrillic", ":lang=ru", "fonts-noto-core"),
    Script("Greek", ":lang=el", "fonts-noto-core"),
    Script("emoji", ":charset=1f600", "fonts-noto-color-emoji"),
    Script("Latin", ":lang=en", "fonts-liberation"),
)
FC_LIST_TIMEOUT_S = 10.0


def missing_scripts(fc_list: str = "fc-list") -> list[Script] | None:
    """The scripts no installed font covers; None when fontconfig cannot be asked (no
    `fc-list`, or it failed): then nothing is known."""
    program = shutil.which(fc_list)
    if program is None:
        return None
    missing = []
    for script in SCRIPTS:
        try:
            found = subprocess.run(
                [program, script.query, "family"],
                capture_output=True,
                text=True,
                timeout=FC_LIST_TIMEOUT_S,
                check=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.info("fc-list %s failed: %s", script.query, exc)
            return None
        if not found.stdout.strip():
            missing.append(script)
    return missing


def warn_missing(missing: list[Script] | None) -> None:
    """One warning naming what screenshots and PDFs cannot draw, and what to install."""
    if missing is None:
        log.warning("fonts: fc-list not found or failed; cannot tell which scripts lack a font")
    elif missing:
        packages = sorted({s.package for s in missing})
        log.warning(
            "fonts: no font for %s: screenshots and PDFs of such pages show empty boxes"
            " (Debian: apt-get install %s)",
            ", ".join(s.name for s in missing),
            " ".join(packages),
        )


def health(missing: list[Script] | None) -> dict[str, object]:
    """The /healthz part: the missing scripts' names (null when unknown); always ok (a
    missing font loses text in the images, not captures)."""
    names = None if missing is None else [s.name for s in missing]
    return {"ok": True, "fonts_missing": names}
