-- Version 14: a timestamp authority's final answer (issue 32). A token the authority refused
-- (PKIStatus rejection) or one that does not verify is kept as `refused` or `invalid` with
-- its reason in last_error and is not asked for again; any other failure stays `pending`
-- and is asked again with the growing delay. SQLite changes a CHECK by rebuilding the table.

CREATE TABLE evidence_timestamps_new (
    snapshot_id  TEXT NOT NULL,
    authority    TEXT NOT NULL,   -- the authority's URL
    fingerprint  TEXT NOT NULL,   -- the manifest it is (to be) over
    status       TEXT NOT NULL
                 CHECK (status IN ('pending', 'granted', 'refused', 'invalid')),
    rounds       INTEGER NOT NULL DEFAULT 0,   -- times asked
    next_try_at  TEXT,            -- when it is asked (again); NULL once granted, refused or invalid
    last_error   TEXT,            -- why the last request gave no token (the final reason)
    granted_time TEXT,            -- the time the authority certified
    token_key    TEXT,            -- its TimeStampResp (the authority's bytes)
    chain_key    TEXT,            -- its chain (PEM)
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, authority)
);
INSERT INTO evidence_timestamps_new SELECT snapshot_id, authority, fingerprint, status, rounds,
    next_try_at, last_error, granted_time, token_key, chain_key, updated_at
    FROM evidence_timestamps;
DROP TABLE evidence_timestamps;
ALTER TABLE evidence_timestamps_new RENAME TO evidence_timestamps;
CREATE INDEX evidence_timestamps_due ON evidence_timestamps (status, next_try_at);
