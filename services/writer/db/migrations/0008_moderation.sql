-- Version 8: an admin's decisions — takedowns, excluded domains — and their audit trail.
-- admin_audit and s3_removals are private: the publishable backup leaves them out (and
-- every row of a taken-down link).

ALTER TABLE links ADD COLUMN taken_down_at TEXT;
CREATE INDEX links_taken_down ON links (taken_down_at) WHERE taken_down_at IS NOT NULL;

CREATE TABLE excluded_domains (
    domain     TEXT PRIMARY KEY,
    reason     TEXT NOT NULL DEFAULT '',
    admin      TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- What an admin decided: which action, on what, why, when, and which admin token's name
-- (never the secret).
CREATE TABLE admin_audit (
    id           INTEGER PRIMARY KEY,
    action       TEXT NOT NULL CHECK (action IN ('takedown', 'exclude', 'retry')),
    target       TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    admin        TEXT NOT NULL,
    request_id   TEXT NOT NULL UNIQUE,
    requested_at TEXT NOT NULL,
    at           TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT ''
);

-- Objects of taken-down links still to delete (or quarantine) from S3: the link's prefix
-- plus any key recorded elsewhere (JSON list); the writer's housekeeping empties it.
CREATE TABLE s3_removals (
    link_id      INTEGER PRIMARY KEY,
    keys         TEXT NOT NULL DEFAULT '[]',
    requested_at TEXT NOT NULL
);
