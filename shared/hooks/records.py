"""JSONL records that hooks print on stdout, one per line; shared by the runner and the hooks.

A hook prints any number of these; the runner parses each line as it arrives, fills in the
fields the hook cannot know (plugin, hook name, timings) and streams it to the writer, except
an ArchiveResult: that is the hook's claim, carried by the final result the runner reports.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)

from shared.platforms.post import Post

ResultStatus = Literal["queued", "started", "succeeded", "partial", "failed", "skipped"]
KEPT: frozenset[ResultStatus] = frozenset({"succeeded", "partial"})
"""The ended statuses whose hook kept something (a reader of it has something to read)."""
SnapshotStatus = Literal["queued", "started", "sealed"]
BinaryStatus = Literal["queued", "started", "succeeded", "failed"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ArchiveResultRecord(_Record):
    """The outcome of one hook run (one per hook per snapshot)."""

    type: Literal["ArchiveResult"] = "ArchiveResult"
    status: ResultStatus
    """queued -> started -> succeeded | partial | failed | skipped. `partial`: something
    useful was kept but not all of it (error_code says why, e.g. E_FETCH_TOO_LARGE)."""
    output_str: str = ""
    """Short human summary, e.g. the main output file or the error message."""
    plugin: str = ""
    """Plugin folder name; filled in by the runner."""
    hook: str = ""
    """Hook file name; filled in by the runner."""
    error_code: str | None = None
    """Machine-readable error code such as E_FETCH_TIMEOUT."""
    exit_code: int | None = None
    """Process exit code; filled in by the runner."""
    retry_at: datetime | None = None
    """When a hard failure should be retried; set by the runner."""
    retry_after_s: float | None = Field(default=None, ge=0)
    """The wait the site asked for (its Retry-After on a 429 or 503), when a hook read one:
    the runner's retry_at and the writer's back-off of the site keep at least this wait
    (at most a day, shared.fetching.retry_after)."""
    started_at: datetime | None = None
    """When the hook process started."""
    ended_at: datetime | None = None
    """When the hook process ended."""
    attempt: int | None = None
    """1-based attempt number of this run; filled in by the runner."""


class SnapshotRecord(_Record):
    """Updates to the snapshot (one capture of one link)."""

    type: Literal["Snapshot"] = "Snapshot"
    status: SnapshotStatus | None = None
    """queued -> started -> sealed."""
    title: str | None = None
    """Page title, when a hook learns it."""
    final_url: str | None = None
    """URL after redirects, when a hook learns it."""
    logged_in: bool | None = None
    """True when the capture was made with the operator's cookies for the site (the
    navigate hook says so): its session files may be private (shared.session_files)."""


class TagRecord(_Record):
    """A tag to attach to the snapshot's link."""

    type: Literal["Tag"] = "Tag"
    name: str = Field(min_length=1, max_length=200)
    """Tag text."""


class MetadataRecord(_Record):
    """Descriptive metadata about the link's page."""

    type: Literal["Metadata"] = "Metadata"
    title: str | None = None
    """Page title."""
    description: str | None = None
    """Page description (og:description, meta description)."""
    author: str | None = None
    """Author, when known."""
    published_at: str | None = None
    """Publication date as found (ISO 8601 preferred)."""
    site_name: str | None = None
    """og:site_name or similar."""
    language: str | None = None
    """Content language."""
    canonical_url: str | None = None
    """The canonical link the page declares (`<link rel=canonical>`, og:url)."""
    favicon: str | None = None
    """The page's icon URL (`<link rel=icon>`, else /favicon.ico)."""
    image: str | None = None
    """Preview image URL (og:image, twitter:image)."""
    has_video: bool | None = None
    """The page shows a video (og:video, a <video> or <audio> element, a link to a media
    file): the writer gives the link a media job."""

    @field_validator("title", "description", "author", "site_name", "language", "published_at")
    @classmethod
    def _shorten(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A page may say anything at any length (a title of 5,000 characters): text
        fields are cut to `TEXT_LIMITS`, with an ellipsis."""
        limit = TEXT_LIMITS[str(info.field_name)]
        if value is None or len(value) <= limit:
            return value
        return value[: limit - 1].rstrip() + "…"

    @field_validator("canonical_url", "favicon", "image")
    @classmethod
    def _drop_long_urls(cls, value: str | None) -> str | None:
        """A URL past `MAX_URL_CHARS` is dropped (a cut URL would point elsewhere)."""
        return None if value is not None and len(value) > MAX_URL_CHARS else value


TEXT_LIMITS = {"title": 300, "description": 1000, "author": 200, "site_name": 200,
               "language": 35, "published_at": 64}  # fmt: skip
"""Characters kept of each text field of a MetadataRecord (Reddit's titles stop at 300)."""
MAX_URL_CHARS = 2048


class TextRecord(_Record):
    """Readable text of the page, for full-text search."""

    type: Literal["Text"] = "Text"
    text: str = Field(max_length=400_000)
    """Plain text (block boundaries kept, whitespace normalised)."""


class ProgressRecord(_Record):
    """How far a long download has come (the media hook prints one every few seconds)."""

    type: Literal["Progress"] = "Progress"
    downloaded_bytes: int = Field(ge=0)
    """Bytes downloaded so far by this hook (all files together)."""
    total_bytes: int | None = Field(default=None, ge=0)
    """Expected total, when the server or the extractor says."""
    percent: float | None = Field(default=None, ge=0, le=100)
    """downloaded / total in percent, when the total is known."""
    file: str | None = None
    """The file being downloaded now (relative to the hook's folder)."""


class MediaRecord(_Record):
    """One video (or audio) the media hook found, identified by platform and video id."""

    type: Literal["Media"] = "Media"
    platform: str = Field(min_length=1, max_length=100)
    """yt-dlp extractor, lower-case (youtube, tiktok, vimeo, generic, ...)."""
    video_id: str = Field(min_length=1, max_length=500)
    """The platform's id of the video."""
    media_url: str | None = None
    """The URL of the page or file the video was downloaded from."""
    title: str | None = None
    """Video title."""
    description: str | None = Field(default=None, max_length=100_000)
    """Video description as the uploader wrote it."""
    uploader: str | None = None
    """Channel or account that uploaded it."""
    duration_s: float | None = None
    """Length in seconds."""
    transcript: str | None = Field(default=None, max_length=400_000)
    """Plain text made from the subtitles (manual preferred over automatic), for search."""
    downloaded: bool = True
    """False when only the metadata was kept (e.g. the file was larger than the cap)."""


class PostRecord(_Record):
    """The post a platform link shows (one shape for every platform, shared.platforms.post),
    as the hook's chain found it; the hook keeps it as `file` too."""

    type: Literal["Post"] = "Post"
    post: Post
    """The post, with the posts it replies to and quotes; its media name the hook's files."""
    file: str = "post.json"
    """Where the hook kept it, relative to its folder (its media files are beside it)."""
    plugin: str = ""
    """The plugin whose folder holds those files; filled in by the runner."""


class BinaryRecord(_Record):
    """A binary a plugin needs, as detected on a worker machine."""

    type: Literal["Binary"] = "Binary"
    name: str
    """Executable name, e.g. yt-dlp."""
    status: BinaryStatus = "succeeded"
    """queued -> started -> succeeded | failed."""
    abspath: str | None = None
    """Resolved path, if found."""
    version: str | None = None
    """Version string, if found."""
    sha256: str | None = None
    """Hash of the executable, if found."""
    binprovider: str | None = None
    """How it was provided: apt, pip, env."""
    binproviders: str | None = Field(
        default=None, validation_alias=AliasChoices("binproviders", "bin_providers")
    )
    """Providers that may install it, comma-separated (binaries.jsonl), e.g. pip,apt,env."""
    machine: str = ""
    """Worker machine id; filled in by the worker."""


class FileRecord(_Record):
    """A hook's facts about one of its output files (read by the worker when it uploads the
    file; never sent on): its artifact kind, content type, and whether it was cut short."""

    type: Literal["File"] = "File"
    path: str = Field(min_length=1)
    """Path relative to the hook's output folder."""
    kind: str | None = None
    """Artifact kind (raw_response, warc, ...); when absent, what the plugin's config.json
    `x-artifacts` declares for the file."""
    content_type: str | None = None
    """MIME type; guessed from the name when absent."""
    truncated: bool = False
    """True when the file holds only the first part of what it should (a byte cap)."""


class ArtifactRecord(_Record):
    """A file a hook produced, uploaded to S3 by the worker; emitted by the runner."""

    type: Literal["Artifact"] = "Artifact"
    plugin: str
    """Plugin that produced it."""
    kind: str
    """raw_html, headers, screenshot, pdf, text, video, audio, thumbnail, subtitles, info, ..."""
    path: str
    """Path relative to the plugin's output folder."""
    s3_key: str
    """Object key in the bucket."""
    content_type: str
    """MIME type."""
    bytes: int
    """Size."""
    sha256: str
    """Hex digest of the content."""
    truncated: bool = False
    """True when the file holds only the first part of the content (a byte cap was hit)."""


HookRecord = Annotated[
    ArchiveResultRecord
    | SnapshotRecord
    | TagRecord
    | MetadataRecord
    | TextRecord
    | ProgressRecord
    | MediaRecord
    | PostRecord
    | BinaryRecord
    | ArtifactRecord
    | FileRecord,
    Field(discriminator="type"),
]
"""Any record a hook (or the runner on its behalf) can emit."""

HOOK_RECORD: TypeAdapter[HookRecord] = TypeAdapter(HookRecord)


def parse_record(line: str | bytes) -> HookRecord:
    """Parse one JSONL line into a record; raises pydantic.ValidationError if invalid."""
    return HOOK_RECORD.validate_json(line)


def dump_record(record: HookRecord) -> str:
    """Serialise a record as one JSON line (no trailing newline)."""
    return record.model_dump_json(exclude_none=True)


def emit(record: HookRecord | dict[str, Any]) -> None:
    """Print a record as one JSONL line on stdout (for Python hooks)."""
    rec = HOOK_RECORD.validate_python(record) if isinstance(record, dict) else record
    print(dump_record(rec), flush=True)
