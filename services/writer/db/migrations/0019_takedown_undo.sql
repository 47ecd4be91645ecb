-- Version 19: a takedown can be undone for TAKEDOWN_UNDO_DAYS (issue 35 item 2). A takedown
-- hides the link at once (links.taken_down_at) and keeps everything captured of it, its rows
-- and its S3 objects, until purge_after; the writer's housekeeping then deletes them (the
-- rows here, the objects through s3_removals). An undo before purge_after clears
-- taken_down_at and the link is shown exactly as before. A row lives from the takedown to
-- its undo or its purge. Private, like admin_audit and s3_removals: emptied in the
-- publishable backup, kept whole in its private part, so a restore still purges in time.
-- Written by services/writer/moderation.py only.

CREATE TABLE takedown_holds (
    link_id       INTEGER PRIMARY KEY,
    request_id    TEXT NOT NULL,   -- the takedown's (admin_audit.request_id)
    taken_down_at TEXT NOT NULL,
    purge_after   TEXT NOT NULL    -- the end of the undo window
);
CREATE INDEX takedown_holds_purge ON takedown_holds (purge_after);

-- The audit trail gains the undo of a takedown and the purge at the end of its window.
CREATE TABLE admin_audit_new (
    id           INTEGER PRIMARY KEY,
    action       TEXT NOT NULL
                 CHECK (action IN ('takedown', 'exclude', 'retry', 'undo', 'purge')),
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
