-- Version 13: watching the originals (issue 24). Every archived link is checked again at set
-- ages (LIVENESS_SCHEDULE); each check is an observation with one of three answers, and the
-- link's verdict follows from its observations (services/writer/liveness/verdict.py). Times
-- are integer Unix seconds and answers small codes: a million links are checked for years,
-- and an observation costs ~30 bytes this way (docs/benchmarks.md).

-- The schedule (services/writer/liveness/dispatch.py): one row per watched link. `due` is
-- when its next check is due, or while a check is out (`state` 1 dispatched, 2 published)
-- that check's deadline, after which it is dispatched again as check `seq` + 1.
CREATE TABLE liveness_schedule (
    link_id INTEGER PRIMARY KEY REFERENCES links (id),
    base    INTEGER NOT NULL,            -- when the ages count from (its first archive)
    due     INTEGER NOT NULL,
    seq     INTEGER NOT NULL DEFAULT 0,  -- checks dispatched so far (the one out is `seq`)
    state   INTEGER NOT NULL DEFAULT 0 CHECK (state IN (0, 1, 2))
);
CREATE INDEX liveness_schedule_due ON liveness_schedule (due);
CREATE INDEX liveness_schedule_out ON liveness_schedule (state) WHERE state > 0;

-- Links archived before this version are watched from their newest archive, their first
-- check due at once (the dispatcher spreads them out within its limits).
INSERT INTO liveness_schedule (link_id, base, due)
    SELECT id, unixepoch(last_archived_at), unixepoch(last_archived_at) + 3600 FROM links
    WHERE last_archived_at IS NOT NULL AND taken_down_at IS NULL;

-- The observations (services/writer/liveness/observations.py): one row per check, its words
-- (how it was asked, the reason word, the platform's own words) kept once each in
-- liveness_words and referred to by id.
CREATE TABLE liveness_observations (
    link_id INTEGER NOT NULL,
    at      INTEGER NOT NULL,            -- when the original answered
    answer  INTEGER NOT NULL CHECK (answer IN (0, 1, 2, 3)),  -- unknown, present, gone,
                                                               -- gone by the platform's tombstone
    status  INTEGER,                     -- the HTTP status, when one arrived
    via     INTEGER NOT NULL,            -- liveness_words: http, x:syndication, reddit:thread-json
    reason  INTEGER NOT NULL,            -- liveness_words: ok, not_found, removed, rate_limited ...
    words   INTEGER,                     -- liveness_words: the platform's words, the error
    changed INTEGER CHECK (changed IN (0, 1)),  -- present: its text differs from the capture's
    PRIMARY KEY (link_id, at)
) WITHOUT ROWID;

CREATE TABLE liveness_words (
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE
);

-- The verdicts (services/writer/liveness/verdicts.py): what a reader is told of the original.
CREATE TABLE liveness_verdicts (
    link_id   INTEGER PRIMARY KEY REFERENCES links (id),
    state     TEXT NOT NULL CHECK (state IN ('present', 'gone', 'unknown')),
    since     INTEGER,                   -- when the state began (gone: the first gone answer)
    reason    TEXT,                      -- the evidence in words: HTTP 404, account suspended
    tombstone INTEGER NOT NULL DEFAULT 0 CHECK (tombstone IN (0, 1)),
    checked   INTEGER NOT NULL,          -- the newest observation's time
    answer    INTEGER NOT NULL,          -- the newest observation's answer (as observations)
    gone_at   INTEGER,                   -- when the gone verdict was reached (/gone.xml)
    edited    INTEGER NOT NULL DEFAULT 0 CHECK (edited IN (0, 1)),  -- a check saw a change
    platform  TEXT NOT NULL              -- x, reddit, bluesky ... or web
);
CREATE INDEX liveness_verdicts_gone ON liveness_verdicts (gone_at) WHERE state = 'gone';

-- Older captures' texts (services/writer/text_history.py): when a capture's text replaces a
-- different one in link_text_fts, the one replaced is kept here, with the capture that held
-- it, so search finds text only an older capture holds. A separate index: the hot search
-- reads link_text_fts alone.
CREATE VIRTUAL TABLE link_text_history USING fts5 (
    link_id UNINDEXED, snapshot_id UNINDEXED, captured_at UNINDEXED, text,
    tokenize = 'porter unicode61'
);
