"""Hook (step 8, post-processing): the page's metadata, from the raw HTML and the rendered DOM.

Reads `../fetch/body.html` (raw, step 4) and `../dom/dom.html` (rendered, step 5), each when
present and not an HTTP error page, plus the values a platform plugin read from the
platform's data, `../<platform>/meta.json` (shared.platforms.kept: Reddit's thread JSON).
Each HTML version gives title, description, author, published date, site name, language,
canonical link, favicon and image (shared.content.metadata); the two are merged: the
rendered page wins (scripts build titles and JSON-LD) unless it is a login wall or an
interstitial and the raw page is not; a field one lacks comes from the other. The platform's
values win over both, and a PDF document's own title, author and creation date
(`../fetch/body.pdf`) over its viewer's page. A platform post a plugin kept
(`../<platform>/post.json`, shared.platforms) wins over them all: its title, author, time
and text, not the login wall the browser may have been shown. Writes `metadata.json` (the
merged values and each source's) and emits one Metadata record, with `has_video` when either
page shows a video (shared.content.video_hint), the platform's values say so (a
Reddit-hosted video) or the platform post shows one (the writer gives such a link a media
job). It reads the platform plugins too, so a post kept while the browser and the raw fetch
failed still names the link. No HTML, no PDF and no post: `skipped` (nothing to read; not retried).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from shared.content.inputs import read_inputs
from shared.content.metadata import PageMetadata, extract_metadata, looks_like_wall, merge
from shared.content.pdf import PdfUnreadable, read_pdf
from shared.content.video_hint import shows_video
from shared.hooks.config import hook_settings
from shared.hooks.records import ArchiveResultRecord, MetadataRecord, emit
from shared.platforms import kept
from shared.platforms.page import post_metadata
from shared.platforms.post import Post


def platform_values(folder: Path) -> tuple[str, dict[str, Any]] | None:
    """(platform, values) a platform plugin read from the platform's data (meta.json), when
    one wrote them."""
    found = kept.find(folder, kept.METADATA)
    if found is None:
        return None
    try:
        data = json.loads(found[1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (found[0], data) if isinstance(data, dict) else None


def values_metadata(post: dict[str, Any]) -> PageMetadata:
    """The page metadata among a platform plugin's values."""
    known = {f.name for f in fields(PageMetadata)}
    return PageMetadata(**{k: v for k, v in post.items() if k in known and isinstance(v, str)})


def platform_post(folder: Path) -> Post | None:
    """The post a platform plugin kept for this link, if one did."""
    for path in sorted(folder.glob("*/post.json")):
        try:
            return Post.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            continue
    return None


def pdf_metadata(path: Path) -> PageMetadata | None:
    """Title, author and creation date of the fetched PDF document (None if there is none
    or it cannot be read)."""
    if not path.is_file():
        return None
    try:
        doc = read_pdf(path, max_pages=0)
    except PdfUnreadable:
        return None
    return PageMetadata(title=doc.title, author=doc.author, published_at=doc.created)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    snapshot = Path("..")
    settings = hook_settings(__file__)
    max_html = int(settings["METADATA_MAX_HTML_BYTES"])
    max_tags = int(settings["METADATA_MAX_TAGS"])
    inputs = read_inputs(snapshot, args.url, max_html, max_tags)  # the parse never sees more
    found = platform_values(snapshot)
    post = found[1] if found is not None else None
    platform = values_metadata(post) if post is not None else None
    document = pdf_metadata(snapshot / "fetch" / "body.pdf")
    kept_post = platform_post(snapshot)
    if all(x is None for x in (inputs.raw, inputs.rendered, platform, document, kept_post)):
        why = "; ".join(inputs.skipped) or "no HTML captured"
        emit(ArchiveResultRecord(status="skipped", output_str=why))
        return 0
    url = inputs.final_url
    raw = extract_metadata(inputs.raw, url) if inputs.raw is not None else PageMetadata()
    rendered = (
        extract_metadata(inputs.rendered, url) if inputs.rendered is not None else PageMetadata()
    )
    merged = merge(raw, rendered)
    if document is not None:  # the PDF's own information, not its viewer's
        merged = replace(merged, **document.as_dict())
    if platform is not None:
        merged = replace(merged, **platform.as_dict())
    if kept_post is not None:
        merged = replace(merged, **post_metadata(kept_post).as_dict())
    saved = {
        **merged.as_dict(),
        "sources": {"raw": raw.as_dict(), "rendered": rendered.as_dict()},
        "rendered_is_wall": looks_like_wall(rendered),
        "platform_values": found[0] if found is not None else None,
        "post": kept_post.platform if kept_post is not None else None,
        "pdf": document.as_dict() if document is not None else None,
        "skipped_sources": list(inputs.skipped),
        "cut_sources": list(inputs.cut),
    }
    values = asdict(merged)
    values["has_video"] = (
        any(shows_video(html) for html in (inputs.raw, inputs.rendered) if html)
        or bool(post and post.get("has_video") is True)
        or bool(kept_post and kept_post.has_video())
    )
    saved["has_video"] = values["has_video"]
    Path("metadata.json").write_text(json.dumps(saved, indent=1, ensure_ascii=False))
    emit(MetadataRecord(**{k: values[k] for k in MetadataRecord.model_fields if k in values}))
    emit(ArchiveResultRecord(status="succeeded", output_str=merged.title or "(untitled)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
