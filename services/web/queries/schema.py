"""The tables the web reads, as SQLAlchemy Core objects (the writer's migrations own them;
tests/web/test_schema_copy.py checks every table, column, type and primary key named here
against a database migrated to the latest version)."""

from __future__ import annotations

from sqlalchemy import Column, Float, Integer, MetaData, Table, Text

metadata = MetaData()

links = Table(
    "links",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("original_url", Text),
    Column("normalized_url", Text),
    Column("canonical_url", Text),
    Column("final_url", Text),
    Column("domain", Text),
    Column("first_seen_at", Text),
    Column("last_seen_at", Text),
    Column("last_archived_at", Text),
    Column("status", Text),
    Column("last_attempt_at", Text),
    Column("last_outcome", Text),
    Column("last_error_code", Text),
    Column("last_error", Text),
    Column("retry_at", Text),
    Column("taken_down_at", Text),
)

link_metadata = Table(
    "link_metadata",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("title", Text),
    Column("description", Text),
    Column("author", Text),
    Column("published_at", Text),
    Column("site_name", Text),
    Column("language", Text),
    Column("updated_at", Text),
)

link_aliases = Table(
    "link_aliases",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("link_id", Integer),
    Column("url", Text),
    Column("original_url", Text),
    Column("reason", Text),
    Column("created_at", Text),
)

discourse_posts = Table(
    "discourse_posts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("post_url", Text),
    Column("forum", Text),
    Column("topic_url", Text),
    Column("title", Text),
    Column("author_username", Text),
    Column("published_at", Text),
)

link_occurrences = Table(
    "link_occurrences",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("link_id", Integer),
    Column("discourse_post_id", Integer),
    Column("seen_at", Text),
    Column("in_quote", Integer),
    Column("context_snippet", Text),
    Column("original_url", Text),
)

archive_jobs = Table(
    "archive_jobs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("link_id", Integer),
    Column("kind", Text),
    Column("status", Text),
    Column("reason", Text),
    Column("attempts", Integer),
    Column("enqueued_at", Text),
    Column("not_before", Text),
    Column("finished_at", Text),
    Column("last_error", Text),
    Column("snapshot_id", Text),
)

snapshots = Table(
    "snapshots",
    metadata,
    Column("id", Text, primary_key=True),
    Column("link_id", Integer),
    Column("job_id", Integer),
    Column("status", Text),
    Column("url", Text),
    Column("title", Text),
    Column("final_url", Text),
    Column("outcome", Text),
    Column("private_session", Integer),
    Column("created_at", Text),
    Column("updated_at", Text),
)

archive_results = Table(
    "archive_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("snapshot_id", Text),
    Column("plugin", Text),
    Column("hook", Text),
    Column("status", Text),
    Column("attempts", Integer),
    Column("error_code", Text),
    Column("output_str", Text),
    Column("retry_at", Text),
    Column("started_at", Text),
    Column("ended_at", Text),
)

archive_result_attempts = Table(
    "archive_result_attempts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("snapshot_id", Text),
    Column("plugin", Text),
    Column("hook", Text),
    Column("attempt", Integer),
    Column("status", Text),
    Column("error_code", Text),
    Column("output_str", Text),
    Column("retry_at", Text),
    Column("started_at", Text),
    Column("ended_at", Text),
)

archive_artifacts = Table(
    "archive_artifacts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("link_id", Integer),
    Column("snapshot_id", Text),
    Column("plugin", Text),
    Column("kind", Text),
    Column("path", Text),
    Column("s3_key", Text),
    Column("content_type", Text),
    Column("bytes", Integer),
    Column("sha256", Text),
    Column("created_at", Text),
    Column("attempt", Integer),
    Column("run", Integer),
)

submissions = Table(
    "submissions",
    metadata,
    Column("request_id", Text, primary_key=True),
    Column("kind", Text),
    Column("url", Text),
    Column("link_id", Integer),
    Column("job_id", Integer),
    Column("requested_at", Text),
    Column("decided_at", Text),
    Column("decision", Text),
    Column("reason", Text),
)

fts = Table(
    "link_text_fts",
    metadata,
    Column("rowid", Integer, primary_key=True),
    Column("title", Text),
    Column("url", Text),
    Column("domain", Text),
    Column("extracted_text", Text),
    Column("media_text", Text),
    Column("post_text", Text),
)

link_posts = Table(
    "link_posts",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("snapshot_id", Text),
    Column("plugin", Text),
    Column("platform", Text),
    Column("post_id", Text),
    Column("source", Text),
    Column("author_name", Text),
    Column("author_handle", Text),
    Column("created_at", Text),
    Column("unavailable", Text),
    Column("post_json", Text),
    Column("captured_at", Text),
    Column("updated_at", Text),
)

media_items = Table(
    "media_items",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("platform", Text),
    Column("video_id", Text),
    Column("snapshot_id", Text),
    Column("status", Text),
    Column("error_code", Text),
    Column("title", Text),
    Column("uploader", Text),
    Column("duration_s", Float),
    Column("media_url", Text),
    Column("downloaded_bytes", Integer),
    Column("total_bytes", Integer),
    Column("percent", Float),
    Column("updated_at", Text),
)

link_media = Table(
    "link_media",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("media_id", Integer, primary_key=True),
    Column("created_at", Text),
)

evidence = Table(
    "evidence",
    metadata,
    Column("snapshot_id", Text, primary_key=True),
    Column("link_id", Integer),
    Column("attempt", Integer),
    Column("manifest_key", Text),
    Column("fingerprint", Text),
    Column("wacz_key", Text),
    Column("verdict", Text),
    Column("verdict_detail", Text),
    Column("checked_at", Text),
    Column("created_at", Text),
    Column("updated_at", Text),
)

evidence_timestamps = Table(
    "evidence_timestamps",
    metadata,
    Column("snapshot_id", Text, primary_key=True),
    Column("authority", Text, primary_key=True),
    Column("fingerprint", Text),
    Column("status", Text),
    Column("rounds", Integer),
    Column("next_try_at", Text),
    Column("last_error", Text),
    Column("granted_time", Text),
    Column("token_key", Text),
    Column("chain_key", Text),
    Column("updated_at", Text),
)

external_archives = Table(
    "external_archives",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("service", Text, primary_key=True),
    Column("url", Text),
    Column("status", Text),
    Column("rounds", Integer),
    Column("next_try_at", Text),
    Column("job_ref", Text),
    Column("snapshot_url", Text),
    Column("captured_at", Text),
    Column("last_error", Text),
    Column("updated_at", Text),
)

liveness_verdicts = Table(
    "liveness_verdicts",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("state", Text),
    Column("since", Integer),
    Column("reason", Text),
    Column("tombstone", Integer),
    Column("checked", Integer),
    Column("answer", Integer),
    Column("gone_at", Integer),
    Column("edited", Integer),
    Column("platform", Text),
)

liveness_observations = Table(
    "liveness_observations",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("at", Integer, primary_key=True),
    Column("answer", Integer),
    Column("status", Integer),
    Column("via", Integer),
    Column("reason", Integer),
    Column("words", Integer),
    Column("changed", Integer),
)

liveness_words = Table(
    "liveness_words",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("text", Text),
)

liveness_schedule = Table(
    "liveness_schedule",
    metadata,
    Column("link_id", Integer, primary_key=True),
    Column("base", Integer),
    Column("due", Integer),
    Column("seq", Integer),
    Column("state", Integer),
)

text_history = Table(
    "link_text_history",
    metadata,
    Column("rowid", Integer, primary_key=True),
    Column("link_id", Integer),
    Column("snapshot_id", Text),
    Column("captured_at", Text),
    Column("text", Text),
)
