"""What the public pages say about an attempt, in words a reader follows: what the capture kept
and what it could not ("The post was kept from X's API; the page itself could not be loaded:
the site's name could not be found"). Hook file names, error codes and exception text are the
owner's: `dla show`, the JSON and the logs carry them, never these sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.hooks.error_codes import reader_words, what_of
from shared.platforms.registry import SITES

STEP_THINGS: dict[str, str] = {
    "navigate": "the page itself",
    "fetch": "the page as its server sent it",
    "screenshot": "the screenshot",
    "pdf": "the PDF",
    "dom": "the rendered page",
    "readable": "the reader view",
    "metadata": "the page's details",
    "traffic": "the record of the page's traffic",
    "media": "the video",
    "adjust": "the page's tidying before the captures",
}
"""What each step makes, as a reader would name it; a platform's steps make 'the post'."""

PAGE_STEPS = ("navigate", "fetch")
"""Steps whose failure means the page could not be loaded at all."""

NOTHING_KEPT = "Nothing of the page was kept"

FOLLOWERS = frozenset({"NOT_LOADED", "DEPENDENCY", "NO_BROWSER"})
"""Endings that only follow from another step's failure: never the reason given."""

POST_SOURCES: dict[str, str] = {
    "syndication": "{p}'s API",
    "appview": "{p}'s API",
    "fxtwitter": "FxTwitter's copy of {p}'s API",
    "yt-dlp": "{p}'s page data",
    "webpage": "{p}'s page data",
    "oembed": "{p}'s embed data",
    "embed": "{p}'s embed page",
    "thread-json": "{p}'s thread data",
    "browser": "the page as the browser showed it",
}
"""Where a kept post came from (its `source`, the step of its platform's chain)."""


def step_thing(plugin: str) -> str:
    """'the screenshot', 'the post', 'the page itself' ..."""
    if plugin in SITES:
        return SITES[plugin].capture_thing
    return STEP_THINGS.get(plugin, f"the {plugin} step's output")


def latest_results(snapshot: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Each hook's last attempt in a capture, in the order the hooks ran."""
    last: dict[str, Mapping[str, Any]] = {}
    for r in snapshot.get("results", ()):
        last[str(r["hook"])] = r
    return [last[h] for h in sorted(last)]


def step_detail(result: Mapping[str, Any]) -> str:
    """The capture history's detail of one step: why it fell short (or was skipped), in
    words, when it has a code; else its own summary ('200 text/html, 12 KB')."""
    code = result.get("error_code")
    if code:
        return reader_words(code)
    if result.get("status") in ("failed", "partial"):
        return "it did not finish"
    return str(result.get("output_str") or "")


def attempt_note(snapshots: Sequence[Mapping[str, Any]], post: Mapping[str, Any] | None) -> str:
    """What the latest capture kept and what it could not, as one or two sentences."""
    results = latest_results(snapshots[0]) if snapshots else []
    kept = _kept(post, results)
    short = _shortfall(results)
    if short is None:
        return f"{kept}."
    plugin, code = str(short["plugin"]), short.get("error_code")
    if what_of(code) == "DECLINED":  # loaded, then not kept on purpose: not a failure to load
        words = reader_words(code)
        if kept == NOTHING_KEPT:
            return f"{words[:1].upper()}{words[1:]}, so nothing of it was kept."
        return f"{kept}; nothing more: {words}."
    if what_of(code) == "NOT_HTML":  # loaded and told apart: a file is not kept as a page
        return f"{kept}; {reader_words(code)}, so it was not stored as one."
    verb = "loaded" if plugin in PAGE_STEPS else "kept"
    return f"{kept}; {step_thing(plugin)} could not be {verb}: {reader_words(code)}."


def _kept(post: Mapping[str, Any] | None, results: Sequence[Mapping[str, Any]]) -> str:
    if post:
        platform = SITES.get(str(post.get("platform") or ""))
        title = platform.title if platform else "the platform"
        where = POST_SOURCES.get(str(post.get("source") or ""), "{p}")
        return f"The post was kept from {where.format(p=title)}"
    made = [
        step_thing(str(r["plugin"]))
        for r in results
        if r["status"] == "succeeded" and r["plugin"] in STEP_THINGS and r["plugin"] != "adjust"
    ]
    if not made:
        return NOTHING_KEPT
    return "Kept: " + ", ".join(dict.fromkeys(t.removeprefix("the ") for t in made))


def _shortfall(results: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The step whose failure tells the reader most: the page's own steps first, then the
    others; a step skipped only because another failed is never the reason."""
    short = [
        r
        for r in results
        if r["status"] in ("failed", "partial") and r.get("error_code") and not _follows(r)
    ]
    page = [r for r in short if r["plugin"] in PAGE_STEPS]
    return next(iter(page or short), None)


def _follows(result: Mapping[str, Any]) -> bool:
    """True when a step's ending only follows from another's failure (FOLLOWERS)."""
    return what_of(result.get("error_code")) in FOLLOWERS


def delivery(artifact: Mapping[str, Any]) -> str:
    """Which try of its capture stored a file: 'attempt 2', 'attempt 1, again' (the same
    attempt run once more: the job came back after S3 or NATS failed), '' when not known (a
    file recorded before the archive kept it, or a timestamp token)."""
    attempt, run = artifact.get("attempt"), artifact.get("run")
    if attempt is None:
        return ""
    return f"attempt {attempt}" + (", again" if run is not None and run > 1 else "")


def several_deliveries(artifacts: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a link's files come from more than one try of one capture (a retried attempt
    keeps the files of the one before): then the Downloads table says which is which."""
    tries: dict[Any, set[tuple[Any, Any]]] = {}
    for a in artifacts:
        if a.get("attempt") is not None:
            tries.setdefault(a.get("snapshot_id"), set()).add((a["attempt"], a.get("run")))
    return any(len(t) > 1 for t in tries.values())
