-- Version 2: the hook pipeline (snapshots, one result per hook run, binaries), the job
-- scheduler's columns, redirect-aware dedup (aliases), tags, feed gaps, submissions and the
-- ids of applied messages (idempotency).

ALTER TABLE discourse_posts ADD COLUMN feed_url TEXT;
ALTER TABLE discourse_posts ADD COLUMN title TEXT;
ALTER TABLE discourse_posts ADD COLUMN first_seen_at TEXT;

ALTER TABLE links ADD COLUMN status TEXT NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'archived', 'failed', 'skipped'));
CREATE INDEX links_status ON links (status, last_archived_at);

ALTER TABLE link_occurrences ADD COLUMN original_url TEXT;

ALTER TABLE archive_jobs ADD COLUMN snapshot_id TEXT;
ALTER TABLE archive_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'capture'
    CHECK (kind IN ('capture', 'media'));
ALTER TABLE archive_jobs ADD COLUMN reason TEXT;
ALTER TABLE archive_jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE archive_jobs ADD COLUMN dispatched_at TEXT;
ALTER TABLE archive_jobs ADD COLUMN published_at TEXT;
ALTER TABLE archive_jobs ADD COLUMN deadline TEXT;
ALTER TABLE archive_jobs ADD COLUMN finished_at TEXT;
ALTER TABLE archive_jobs ADD COLUMN retry_hooks TEXT;
CREATE INDEX archive_jobs_snapshot ON archive_jobs (snapshot_id);

ALTER TABLE archive_artifacts ADD COLUMN snapshot_id TEXT;
ALTER TABLE archive_artifacts ADD COLUMN plugin TEXT;
ALTER TABLE archive_artifacts ADD COLUMN path TEXT;

ALTER TABLE link_metadata ADD COLUMN updated_at TEXT;

CREATE TABLE snapshots (
    id         TEXT PRIMARY KEY,
    link_id    INTEGER NOT NULL REFERENCES links (id),
    job_id     INTEGER REFERENCES archive_jobs (id),
    status     TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'started', 'sealed')),
    url        TEXT NOT NULL,
    title      TEXT,
    final_url  TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX snapshots_link ON snapshots (link_id);

CREATE TABLE archive_results (
    id          INTEGER PRIMARY KEY,
    snapshot_id TEXT NOT NULL REFERENCES snapshots (id),
    plugin      TEXT NOT NULL,
    hook        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN (
        'queued', 'started', 'succeeded', 'failed', 'skipped')),
    retry_at    TEXT,
    attempts    INTEGER NOT NULL DEFAULT 1,
    run         INTEGER NOT NULL DEFAULT 1,
    seq         INTEGER NOT NULL DEFAULT 0,
    exit_code   INTEGER,
    error_code  TEXT,
    output_str  TEXT NOT NULL DEFAULT '',
    started_at  TEXT,
    ended_at    TEXT,
    updated_at  TEXT NOT NULL,
    UNIQUE (snapshot_id, hook)
);

CREATE TABLE binaries (
    id            INTEGER PRIMARY KEY,
    machine       TEXT NOT NULL,
    name          TEXT NOT NULL,
    abspath       TEXT NOT NULL DEFAULT '',
    version       TEXT NOT NULL DEFAULT '',
    sha256        TEXT NOT NULL DEFAULT '',
    binprovider   TEXT,
    status        TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    last_seen_at  TEXT NOT NULL,
    UNIQUE (machine, name, abspath, version, sha256)
);

-- URLs (normalized, canonical or final form) that resolve to a link other than its own
-- normalized_url: other spellings of the same canonical URL, redirect targets, merged links.
CREATE TABLE link_aliases (
    id             INTEGER PRIMARY KEY,
    link_id        INTEGER NOT NULL REFERENCES links (id),
    url            TEXT NOT NULL UNIQUE,
    original_url   TEXT NOT NULL,
    reason         TEXT NOT NULL CHECK (reason IN ('canonical', 'redirect', 'merged')),
    merged_link_id INTEGER,
    created_at     TEXT NOT NULL
);
CREATE INDEX link_aliases_link ON link_aliases (link_id);
CREATE INDEX link_aliases_merged ON link_aliases (merged_link_id);

CREATE TABLE link_tags (
    link_id    INTEGER NOT NULL REFERENCES links (id),
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (link_id, name)
) WITHOUT ROWID;

CREATE TABLE feed_gaps (
    id               INTEGER PRIMARY KEY,
    feed_url         TEXT NOT NULL,
    detected_at      TEXT NOT NULL,
    backfilled_posts INTEGER NOT NULL,
    closed           INTEGER NOT NULL CHECK (closed IN (0, 1)),
    UNIQUE (feed_url, detected_at)
);

-- What became of each person's request (cmd.submit / cmd.rearchive), by request id.
CREATE TABLE submissions (
    request_id   TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('submit', 'rearchive')),
    url          TEXT,
    link_id      INTEGER,
    job_id       INTEGER,
    requested_at TEXT NOT NULL,
    decided_at   TEXT NOT NULL,
    decision     TEXT NOT NULL,
    reason       TEXT NOT NULL
);

-- Nats-Msg-Id of every applied message: a redelivery finds its id here and changes nothing.
CREATE TABLE processed_messages (
    id         INTEGER PRIMARY KEY,
    msg_id     TEXT NOT NULL UNIQUE,
    subject    TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE INDEX processed_messages_applied ON processed_messages (applied_at);
