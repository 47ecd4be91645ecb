-- Version 7: media. One row per video (platform + video id), downloaded once however many
-- links show it; which links show which video; domains backing off after a rate-limit
-- answer; and the media text (title, uploader, description, transcript) in the links'
-- full-text index.

CREATE TABLE media_items (
    id               INTEGER PRIMARY KEY,
    media_key        TEXT NOT NULL UNIQUE,   -- '<platform>:<video id>' (shared/links/video.py)
    platform         TEXT NOT NULL,
    video_id         TEXT NOT NULL,
    link_id          INTEGER NOT NULL REFERENCES links (id),  -- the link whose job downloads it
    job_id           INTEGER REFERENCES archive_jobs (id),    -- that media job
    snapshot_id      TEXT,
    status           TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'downloaded', 'metadata_only', 'failed')),
    error_code       TEXT,
    title            TEXT,
    description      TEXT,
    uploader         TEXT,
    duration_s       REAL,
    transcript       TEXT,
    media_url        TEXT,
    downloaded_bytes INTEGER,
    total_bytes      INTEGER,
    percent          REAL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX media_items_job ON media_items (job_id);

CREATE TABLE link_media (
    link_id    INTEGER NOT NULL REFERENCES links (id),
    media_id   INTEGER NOT NULL REFERENCES media_items (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (link_id, media_id)
) WITHOUT ROWID;
CREATE INDEX link_media_media ON link_media (media_id);

-- No job of a registrable domain is dispatched before `until` (set on a rate-limit answer).
CREATE TABLE domain_backoff (
    domain     TEXT PRIMARY KEY,
    until      TEXT NOT NULL,
    reason     TEXT NOT NULL,
    hits       INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL
);

-- The full-text index gains a media_text column (FTS5 tables cannot add columns: rebuilt).
ALTER TABLE link_text_fts RENAME TO link_text_fts_v2;
CREATE VIRTUAL TABLE link_text_fts USING fts5 (
    link_id UNINDEXED, title, url, domain, extracted_text, media_text,
    tokenize = 'porter unicode61'
);
INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text, media_text)
    SELECT rowid, link_id, title, url, domain, extracted_text, '' FROM link_text_fts_v2;
DROP TABLE link_text_fts_v2;
