-- Version 1: the core tables of the seed spec §9.

CREATE TABLE discourse_posts (
    id              INTEGER PRIMARY KEY,
    guid            TEXT NOT NULL UNIQUE,
    post_url        TEXT NOT NULL,
    topic_url       TEXT,
    author_username TEXT,
    published_at    TEXT,
    updated_at      TEXT,
    content_html    TEXT NOT NULL,
    content_hash    TEXT NOT NULL,
    last_seen_at    TEXT NOT NULL
);

CREATE TABLE links (
    id               INTEGER PRIMARY KEY,
    original_url     TEXT NOT NULL,
    normalized_url   TEXT NOT NULL UNIQUE,
    canonical_url    TEXT NOT NULL,
    final_url        TEXT,
    domain           TEXT NOT NULL,
    first_seen_at    TEXT NOT NULL,
    last_seen_at     TEXT NOT NULL,
    last_archived_at TEXT
);
CREATE INDEX links_domain_archived ON links (domain, last_archived_at);
CREATE INDEX links_canonical ON links (canonical_url);

CREATE TABLE link_occurrences (
    id                INTEGER PRIMARY KEY,
    link_id           INTEGER NOT NULL REFERENCES links (id),
    discourse_post_id INTEGER NOT NULL REFERENCES discourse_posts (id),
    seen_at           TEXT NOT NULL,
    in_quote          INTEGER NOT NULL DEFAULT 0 CHECK (in_quote IN (0, 1)),
    context_snippet   TEXT,
    UNIQUE (discourse_post_id, link_id, in_quote)
);
CREATE INDEX link_occurrences_link ON link_occurrences (link_id);

CREATE TABLE archive_jobs (
    id          INTEGER PRIMARY KEY,
    link_id     INTEGER NOT NULL REFERENCES links (id),
    enqueued_at TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN (
        'queued', 'running', 'succeeded', 'failed', 'skipped_cached', 'skipped_policy')),
    priority    INTEGER NOT NULL DEFAULT 0,
    not_before  TEXT,
    last_error  TEXT
);
CREATE INDEX archive_jobs_status ON archive_jobs (status, not_before);
CREATE INDEX archive_jobs_link ON archive_jobs (link_id);

CREATE TABLE archive_artifacts (
    id           INTEGER PRIMARY KEY,
    link_id      INTEGER NOT NULL REFERENCES links (id),
    kind         TEXT NOT NULL,
    s3_key       TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX archive_artifacts_link ON archive_artifacts (link_id);

CREATE TABLE link_metadata (
    link_id      INTEGER PRIMARY KEY REFERENCES links (id),
    title        TEXT,
    description  TEXT,
    author       TEXT,
    published_at TEXT,
    site_name    TEXT,
    language     TEXT
);

-- One row per link, rowid = links.id.
CREATE VIRTUAL TABLE link_text_fts USING fts5 (
    link_id UNINDEXED, title, url, domain, extracted_text,
    tokenize = 'porter unicode61'
);
