-- Version 5: every attempt's result of every hook, kept. archive_results holds the current
-- result per hook (what the writer decides on); a retry used to overwrite the failed
-- attempt there, so the history was lost. archive_result_attempts keeps one row per
-- (snapshot, hook, attempt), written together with archive_results (services/writer/capture_results.py).

CREATE TABLE archive_result_attempts (
    id          INTEGER PRIMARY KEY,
    snapshot_id TEXT NOT NULL REFERENCES snapshots (id),
    plugin      TEXT NOT NULL,
    hook        TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN (
        'queued', 'started', 'succeeded', 'partial', 'failed', 'skipped')),
    run         INTEGER NOT NULL DEFAULT 1,
    seq         INTEGER NOT NULL DEFAULT 0,
    exit_code   INTEGER,
    error_code  TEXT,
    output_str  TEXT NOT NULL DEFAULT '',
    retry_at    TEXT,
    started_at  TEXT,
    ended_at    TEXT,
    updated_at  TEXT NOT NULL,
    UNIQUE (snapshot_id, hook, attempt)
);

INSERT INTO archive_result_attempts (snapshot_id, plugin, hook, attempt, status, run, seq,
    exit_code, error_code, output_str, retry_at, started_at, ended_at, updated_at)
SELECT snapshot_id, plugin, hook, attempts, status, run, seq, exit_code, error_code,
    output_str, retry_at, started_at, ended_at, updated_at
FROM archive_results;
