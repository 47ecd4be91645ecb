"""Takedown tombstones: the one module writing ``takedown_tombstones``.

A takedown must outlive the rows of its link. Every backup is the publishable database,
which deletes those rows (`backup.make_publishable`), so without more a database restored
from a backup would archive and publish the URL again the next time it is posted. A
tombstone is one form of a taken-down link's URL (original, normalized, canonical, final,
every alias) as a keyed hash, written in the takedown's transaction and kept in every backup:

- `linkstore.upsert_link`, the one place a link is created, makes a link whose original,
  normalized or canonical URL matches a tombstone *born taken down*, so every rule of a
  taken-down link applies (skipped "taken down", never public, never queued);
- `dedup.on_final_url` takes down a link whose capture ended on a tombstoned URL (a short
  link, a redirect to it);
- `sync` (at the writer's start) tombstones the taken-down links a database has (those taken
  down before tombstones existed, or under another key) and counts the tombstones made under
  another key, which can match nothing.

The hash is HMAC-SHA256 keyed by ``TAKEDOWN_KEY``. Unset, the key is empty: anyone holding a
backup can then confirm that a URL they guess was taken down (a plain hash hides only URLs
nobody can guess). With a key, a backup says nothing about any URL without the key; but the
key must then be kept apart from the database, as long as the backups: a database restored
under another key (or none) no longer recognises the URLs taken down before, and the writer
says so at start (a log error and ``dla_writer_tombstones_other_key``).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.writer.db import transaction
from services.writer.metrics import TOMBSTONES_OTHER_KEY

log = logging.getLogger(__name__)

_KEY_ID_MESSAGE = b"dla takedown tombstone key id"


@dataclass(frozen=True)
class TombstoneKey:
    """The secret tombstones are hashed with (empty: no secret); never shown in a repr."""

    secret: bytes = field(default=b"", repr=False)

    @property
    def key_id(self) -> str:
        """Which key this is, as stored beside each tombstone (tells nothing of the key)."""
        return hmac.new(self.secret, _KEY_ID_MESSAGE, hashlib.sha256).hexdigest()[:16]

    def digest(self, url: str) -> str:
        """The tombstone of one form of a URL."""
        return hmac.new(self.secret, url.encode(), hashlib.sha256).hexdigest()


def matches(conn: sqlite3.Connection, key: TombstoneKey, urls: Iterable[str]) -> bool:
    """Whether any of these forms of a URL was taken down."""
    digests = sorted({key.digest(u) for u in urls if u})
    if not digests:
        return False
    marks = ",".join("?" * len(digests))
    sql = f"SELECT 1 FROM takedown_tombstones WHERE digest IN ({marks}) LIMIT 1"
    return conn.execute(sql, digests).fetchone() is not None


def record(conn: sqlite3.Connection, key: TombstoneKey, urls: Iterable[str], now: str) -> None:
    """Tombstone these forms of a URL (those already tombstoned keep their row)."""
    conn.executemany(
        "INSERT INTO takedown_tombstones (digest, key_id, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT (digest) DO NOTHING",
        [(key.digest(u), key.key_id, now) for u in sorted({u for u in urls if u})],
    )


def bury(conn: sqlite3.Connection, key: TombstoneKey, link_id: int, now: str) -> None:
    """Tombstone every form of the link's URL that the database knows."""
    record(conn, key, forms_of_link(conn, link_id), now)


def unbury(conn: sqlite3.Connection, key: TombstoneKey, link_id: int) -> None:
    """Remove the tombstones of the link's URL forms (its takedown was undone), except those
    another taken-down link shares."""
    others = conn.execute(
        "SELECT id FROM links WHERE taken_down_at IS NOT NULL AND id != ?", (link_id,)
    ).fetchall()
    kept = {key.digest(u) for (other,) in others for u in forms_of_link(conn, int(other))}
    gone = sorted({key.digest(u) for u in forms_of_link(conn, link_id)} - kept)
    conn.executemany("DELETE FROM takedown_tombstones WHERE digest = ?", [(d,) for d in gone])


def forms_of_link(conn: sqlite3.Connection, link_id: int) -> set[str]:
    """The link's original, normalized, canonical and final URL, and its aliases."""
    rows = conn.execute(
        "SELECT original_url, normalized_url, canonical_url, final_url FROM links WHERE id = ?1"
        " UNION ALL SELECT url, original_url, NULL, NULL FROM link_aliases WHERE link_id = ?1",
        (link_id,),
    )
    return {str(url) for row in rows for url in row if url}


def sync(conn: sqlite3.Connection, key: TombstoneKey, now: str) -> int:
    """Tombstone every taken-down link under the current key; returns how many tombstones
    were made under another key (they match nothing now)."""
    with transaction(conn):
        down = conn.execute("SELECT id FROM links WHERE taken_down_at IS NOT NULL").fetchall()
        for (link_id,) in down:
            bury(conn, key, int(link_id), now)
        other = int(
            conn.execute(
                "SELECT count(*) FROM takedown_tombstones WHERE key_id != ?", (key.key_id,)
            ).fetchone()[0]
        )
    TOMBSTONES_OTHER_KEY.set(other)
    if other:
        log.error(
            "%d takedown tombstone(s) were made under another TAKEDOWN_KEY: the URLs they stand"
            " for would be archived again if posted; set the key they were made with",
            other,
        )
    return other
