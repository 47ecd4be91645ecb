"""Jinja2 templates with the presentation filters; autoescaping is always on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates

from services.web import attempt_words, posts, present
from shared.external import TITLES as ARCHIVE_TITLES

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
TEMPLATES.env.filters.update(present.FILTERS)
TEMPLATES.env.globals.update(
    display_status=present.display_status,
    capture_state=present.capture_state,
    badges=present.badges,
    when=present.when,
    status_pill=present.status_pill,
    link_item=present.link_item,
    source_badge=present.source_badge,
    counts_line=posts.counts_line,
    attempt_note=attempt_words.attempt_note,
    step_detail=attempt_words.step_detail,
    delivery=attempt_words.delivery,
    several_deliveries=attempt_words.several_deliveries,
    archive_titles=ARCHIVE_TITLES,
)


def render(
    request: Request,
    name: str,
    context: dict[str, Any],
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """A page."""
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status, headers=headers)
