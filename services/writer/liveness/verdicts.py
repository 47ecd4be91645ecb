"""The verdicts (`liveness_verdicts`, written here only): what a reader is told of each
watched link's original, kept beside its observations so lists, search filters, /gone.xml
and the stats read one row per link. The rule itself is `verdict.py`'s."""

from __future__ import annotations

import sqlite3

from services.writer.liveness.observations import code
from services.writer.liveness.verdict import LivenessVerdict
from shared.platforms.chains import recognise
from shared.platforms.outcome import Answer
from shared.platforms.registry import SITES


def platform_of(url: str, via: str = "") -> str:
    """The platform whose post the link is (x, reddit ...), else `web`: the one whose API
    answered the check (`via`, `mastodon:status-api`: only the archiver knows a platform on
    any host, by its plugin's instances), else the one its URL names."""
    head = via.split(":", 1)[0]
    if head in SITES:
        return head
    ref = recognise(url)
    return ref.platform if ref is not None else "web"


def update(
    conn: sqlite3.Connection,
    link_id: int,
    found: LivenessVerdict,
    *,
    newest: tuple[Answer, bool],
    changed: bool,
    via: str = "",
) -> None:
    """Store the link's verdict after a check whose answer was `newest` (answer, tombstone);
    `changed`: that check saw the text changed (the link then reads as edited, for good);
    `via`: what answered it (the platform's API step, or `http`).
    `gone_at` is when the state first became `gone` (kept while it stays gone)."""
    if found.last_checked_at is None:
        return
    url = conn.execute("SELECT canonical_url FROM links WHERE id = ?", (link_id,)).fetchone()
    if url is None:
        return
    checked = int(found.last_checked_at.timestamp())
    conn.execute(
        "INSERT INTO liveness_verdicts (link_id, state, since, reason, tombstone, checked,"
        " answer, gone_at, edited, platform) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (link_id) DO UPDATE SET state = excluded.state, since = excluded.since,"
        " reason = excluded.reason, tombstone = excluded.tombstone,"
        " checked = excluded.checked, answer = excluded.answer,"
        " gone_at = CASE WHEN excluded.state != 'gone' THEN NULL"
        "  WHEN liveness_verdicts.state = 'gone' THEN liveness_verdicts.gone_at"
        "  ELSE excluded.gone_at END,"
        " edited = max(liveness_verdicts.edited, excluded.edited),"
        " platform = excluded.platform",
        (
            link_id,
            found.state,
            None if found.since is None else int(found.since.timestamp()),
            found.reason,
            int(found.tombstone),
            checked,
            code(*newest),
            checked if found.state == "gone" else None,
            int(changed),
            platform_of(str(url[0]), via),
        ),
    )


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: the survivor keeps its own verdict (or takes the
    loser's, when it had none); the next check recomputes it from both's observations."""
    conn.execute(
        "UPDATE OR IGNORE liveness_verdicts SET link_id = ? WHERE link_id = ?", (survivor, loser)
    )
    conn.execute("DELETE FROM liveness_verdicts WHERE link_id = ?", (loser,))
