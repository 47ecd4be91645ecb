-- Version 12: evidence. Each capture's manifest (its sha256 is the capture's fingerprint),
-- its WACZ and the verdict the last check of them gave, one row per snapshot; and one row
-- per timestamp authority of that manifest (TSA_URLS): pending until a token is granted,
-- asked again with a growing delay. Written by services/writer/evidence_store.py.

CREATE TABLE evidence (
    snapshot_id    TEXT PRIMARY KEY,
    link_id        INTEGER NOT NULL REFERENCES links(id),
    attempt        INTEGER NOT NULL,
    manifest_key   TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,   -- sha256 (hex) of manifest.json
    wacz_key       TEXT,
    verdict        TEXT NOT NULL CHECK (verdict IN ('verified', 'mismatch')),
    verdict_detail TEXT NOT NULL,
    checked_at     TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX evidence_link ON evidence (link_id);

CREATE TABLE evidence_timestamps (
    snapshot_id  TEXT NOT NULL,
    authority    TEXT NOT NULL,   -- the authority's URL
    fingerprint  TEXT NOT NULL,   -- the manifest it is (to be) over
    status       TEXT NOT NULL CHECK (status IN ('pending', 'granted')),
    rounds       INTEGER NOT NULL DEFAULT 0,   -- times asked
    next_try_at  TEXT,            -- when it is asked (again); NULL once granted
    last_error   TEXT,
    granted_time TEXT,            -- the time the authority certified
    token_key    TEXT,            -- its TimeStampResp (DER)
    chain_key    TEXT,            -- its chain (PEM)
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, authority)
);
CREATE INDEX evidence_timestamps_due ON evidence_timestamps (status, next_try_at);
