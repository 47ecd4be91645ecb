-- Version 3: capture outcomes a reader can see (issue 16). Every attempt that ends leaves
-- on its link what it did and what happens next; a result, a snapshot or a link can be
-- `partial` (something kept, not all: a body cut at the byte cap); an artifact says when it
-- holds only the first part of its content. SQLite cannot alter a CHECK constraint, so
-- `links` and `archive_results` are rebuilt (migrate() runs with foreign keys off and checks
-- them after; every index of the two tables is re-created here).

CREATE TABLE links_v3 (
    id               INTEGER PRIMARY KEY,
    original_url     TEXT NOT NULL,
    normalized_url   TEXT NOT NULL UNIQUE,
    canonical_url    TEXT NOT NULL,
    final_url        TEXT,
    domain           TEXT NOT NULL,
    first_seen_at    TEXT NOT NULL,
    last_seen_at     TEXT NOT NULL,
    last_archived_at TEXT,
    status           TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'archived', 'partial', 'failed', 'skipped')),
    -- the last attempt that ended: when, what it did, why not better, and what happens next
    last_attempt_at  TEXT,
    last_outcome     TEXT CHECK (last_outcome IN ('succeeded', 'partial', 'failed')),
    last_error_code  TEXT,
    last_error       TEXT,
    retry_at         TEXT
);
INSERT INTO links_v3 (id, original_url, normalized_url, canonical_url, final_url, domain,
    first_seen_at, last_seen_at, last_archived_at, status)
SELECT id, original_url, normalized_url, canonical_url, final_url, domain,
    first_seen_at, last_seen_at, last_archived_at, status FROM links;
DROP TABLE links;
ALTER TABLE links_v3 RENAME TO links;
CREATE INDEX links_domain_archived ON links (domain, last_archived_at);
CREATE INDEX links_canonical ON links (canonical_url);
CREATE INDEX links_status ON links (status, last_archived_at);

CREATE TABLE archive_results_v3 (
    id          INTEGER PRIMARY KEY,
    snapshot_id TEXT NOT NULL REFERENCES snapshots (id),
    plugin      TEXT NOT NULL,
    hook        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN (
        'queued', 'started', 'succeeded', 'partial', 'failed', 'skipped')),
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
INSERT INTO archive_results_v3 SELECT * FROM archive_results;
DROP TABLE archive_results;
ALTER TABLE archive_results_v3 RENAME TO archive_results;

-- what the attempt that sealed (or last reported on) the snapshot achieved
ALTER TABLE snapshots ADD COLUMN outcome TEXT
    CHECK (outcome IN ('succeeded', 'partial', 'failed'));

ALTER TABLE archive_artifacts ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0
    CHECK (truncated IN (0, 1));
