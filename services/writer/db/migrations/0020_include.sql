-- Version 20: an exclusion can be lifted (`dla include`, cmd.include): the audit trail
-- gains the action 'include'. Written by services/writer/moderation.py only.
CREATE TABLE admin_audit_new (
    id           INTEGER PRIMARY KEY,
    action       TEXT NOT NULL
                 CHECK (action IN ('takedown', 'exclude', 'retry', 'undo', 'purge', 'include')),
    target       TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    admin        TEXT NOT NULL,
    request_id   TEXT NOT NULL UNIQUE,
    requested_at TEXT NOT NULL,
    at           TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT ''
);
INSERT INTO admin_audit_new SELECT * FROM admin_audit;
DROP TABLE admin_audit;
ALTER TABLE admin_audit_new RENAME TO admin_audit;
