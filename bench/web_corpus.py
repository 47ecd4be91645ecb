"""A generated archive of N links for the web benchmark, built fast with SQL bulk inserts
on the real migrations, and cached under bench/out/ (later migrations are applied to the
cached copy when it is used, as the writer would).

Text is drawn from a 20,000-word vocabulary with Zipf-like frequencies, so the benchmark
searches hit common words (most documents), middling ones and rare ones.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from services.writer.db import open_db

VOCABULARY = 20_000
TITLE_WORDS = 8
TEXT_WORDS = 60
BATCH = 20_000
DOMAINS = 500
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor",
              "fen", "gal", "hum", "jor", "lix", "mon", "nub", "orb"]  # fmt: skip


def word(i: int) -> str:
    """The i-th vocabulary word (deterministic, pronounceable, unique)."""
    out, n = [], i + 1
    while n:
        n, r = divmod(n, len(_SYLLABLES))
        out.append(_SYLLABLES[r])
    return "".join(out)


def words() -> list[str]:
    return [word(i) for i in range(VOCABULARY)]


def _rows(n: int, vocab: list[str], seed: int = 7) -> Iterator[list[tuple[object, ...]]]:
    rng = random.Random(seed)
    weights = [1 / (r + 1) for r in range(len(vocab))]
    cum = list(__import__("itertools").accumulate(weights))
    batch: list[tuple[object, ...]] = []
    for i in range(1, n + 1):
        picked = rng.choices(vocab, cum_weights=cum, k=TITLE_WORDS + TEXT_WORDS)
        batch.append(
            (i, " ".join(picked[:TITLE_WORDS]).capitalize(), " ".join(picked[TITLE_WORDS:]))
        )
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def build(path: Path, n: int) -> None:
    """Create the database at path with n links (about 1 minute per 100,000 on 2 cores...)."""
    tmp = path.with_suffix(".building")
    tmp.unlink(missing_ok=True)
    conn = open_db(tmp)
    conn.execute("PRAGMA synchronous = OFF")
    t0 = time.monotonic()
    conn.execute("BEGIN")
    conn.execute(
        """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO links (id, original_url, normalized_url, canonical_url, domain,
                           first_seen_at, last_seen_at, last_archived_at, status)
        SELECT i,
               'https://site' || (i % ?) || '.example/post/' || i || '?utm_source=x',
               'https://site' || (i % ?) || '.example/post/' || i,
               'https://site' || (i % ?) || '.example/post/' || i,
               'site' || (i % ?) || '.example',
               strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i * 30, 'unixepoch'),
               strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i * 30, 'unixepoch'),
               CASE WHEN i % 20 IN (1, 2) OR i % 20 = 3 THEN NULL
                    ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i * 30 + 60, 'unixepoch') END,
               CASE WHEN i % 20 IN (1, 2) THEN 'failed' WHEN i % 20 = 3 THEN 'skipped'
                    ELSE 'archived' END
        FROM n
        """,
        (n, DOMAINS, DOMAINS, DOMAINS, DOMAINS),
    )
    conn.execute(
        """
        INSERT INTO snapshots (id, link_id, status, url, created_at, updated_at)
        SELECT 's' || id, id, 'sealed', canonical_url, first_seen_at, first_seen_at
        FROM links WHERE status != 'skipped'
        """
    )
    conn.execute(
        """
        INSERT INTO archive_results (snapshot_id, plugin, hook, status, error_code, output_str,
                                     updated_at)
        SELECT 's' || id, 'fetch', 'on_Snapshot__41_fetch.py',
               CASE status WHEN 'failed' THEN 'failed' ELSE 'succeeded' END,
               CASE WHEN status = 'failed' THEN
                    CASE id % 3 WHEN 0 THEN 'E_FETCH_HTTP_404' WHEN 1 THEN 'E_FETCH_TIMEOUT'
                    ELSE 'E_FETCH_HTTP_503' END END,
               '', first_seen_at
        FROM links WHERE status != 'skipped'
        """
    )
    conn.execute(
        """
        INSERT INTO archive_artifacts (link_id, snapshot_id, plugin, kind, path, s3_key,
                                       content_type, bytes, sha256, created_at)
        SELECT id, 's' || id, 'screenshot', 'screenshot', 'screenshot.png',
               'archives/' || id || '/s' || id || '/screenshot/screenshot.png', 'image/png',
               100000 + id % 5000, printf('%064x', id), last_archived_at
        FROM links WHERE status = 'archived'
        UNION ALL
        SELECT id, 's' || id, 'media', 'video', 'video.mp4',
               'archives/' || id || '/s' || id || '/media/video.mp4', 'video/mp4',
               5000000, printf('%064x', id + 1), last_archived_at
        FROM links WHERE status = 'archived' AND id % 37 = 0
        """
    )
    conn.execute(
        "INSERT INTO discourse_posts (id, guid, post_url, content_html, content_hash,"
        " last_seen_at, author_username) VALUES (1, 'g1', 'https://forum.test/p/1', '', '',"
        " '2024-01-01T00:00:00Z', 'alice')"
    )
    conn.execute(
        """
        INSERT INTO link_occurrences (link_id, discourse_post_id, seen_at, in_quote,
                                      context_snippet)
        SELECT id, 1, first_seen_at, id % 4 = 0, 'see ' || canonical_url FROM links
        WHERE id % 10 = 0
        """
    )
    conn.execute("COMMIT")
    t1 = time.monotonic()
    vocab = words()
    for batch in _rows(n, vocab):
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO link_metadata (link_id, title) VALUES (?, ?)",
            ((i, t) for i, t, _ in batch),
        )
        conn.executemany(
            "INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text)"
            " SELECT ?, ?, ?, canonical_url, domain, ? FROM links WHERE id = ?",
            ((i, i, t, text, i) for i, t, text in batch),
        )
        conn.execute("COMMIT")
    conn.execute("INSERT INTO link_text_fts (link_text_fts) VALUES ('optimize')")
    conn.execute("ANALYZE")
    conn.close()
    tmp.rename(path)
    print(f"built {path.name}: {n:,} links (tables {t1 - t0:.0f} s, text + FTS"
          f" {time.monotonic() - t1:.0f} s)")  # fmt: skip


def corpus(out: Path, n: int) -> Path:
    """The cached database of n links (built if missing), migrated to the current schema."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"web-{n}.sqlite3"
    if not path.exists():
        build(path, n)
    conn = open_db(path)  # applies migrations newer than the cached copy
    with conn:  # what the writer records on a link when an attempt ends
        conn.execute(
            "UPDATE links SET last_outcome = 'failed', last_attempt_at = first_seen_at,"
            " last_error_code = CASE id % 3 WHEN 0 THEN 'E_FETCH_HTTP_404'"
            " WHEN 1 THEN 'E_FETCH_TIMEOUT' ELSE 'E_FETCH_HTTP_503' END"
            " WHERE status = 'failed' AND last_outcome IS NULL"
        )
        conn.execute(
            "UPDATE links SET last_outcome = 'succeeded', last_attempt_at = last_archived_at"
            " WHERE status = 'archived' AND last_outcome IS NULL"
        )
    conn.close()
    return path


def check(path: Path) -> int:
    """Links in a built corpus."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM links").fetchone()[0])
