-- Version 17: the submissions of each archived link to the public archives (issue 35 item 4):
-- one row per link and service (`wayback`: the Internet Archive's Save Page Now 2,
-- `archive_today`), planned once the link's own capture succeeded (WAYBACK_SUBMIT,
-- ARCHIVE_TODAY_SUBMIT): `pending` until the service gives its public snapshot (`archived`)
-- or refuses for good (`failed`, its words in last_error). Written by
-- services/writer/external_archives.py. No key of any service is ever stored here.

CREATE TABLE external_archives (
    link_id      INTEGER NOT NULL REFERENCES links(id),
    service      TEXT NOT NULL CHECK (service IN ('wayback', 'archive_today')),
    url          TEXT NOT NULL,   -- the URL submitted
    status       TEXT NOT NULL CHECK (status IN ('pending', 'archived', 'failed')),
    rounds       INTEGER NOT NULL DEFAULT 0,   -- jobs sent
    next_try_at  TEXT,            -- when it is asked (again); NULL once archived or failed
    job_ref      TEXT,            -- the service's job in progress (polled, not resubmitted)
    snapshot_url TEXT,            -- the public snapshot
    captured_at  TEXT,            -- its time
    last_error   TEXT,            -- why not (yet), in words
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (link_id, service)
);
CREATE INDEX external_archives_due ON external_archives (status, next_try_at);
