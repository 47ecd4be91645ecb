"""`dla` commands that need no running stack: backup and restore of a database file."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from services.writer.db import open_db
from shared.messages import ExcludeCommand
from testkit.writer_harness import T0, Harness, dump, occ, post
from tests.writer.test_moderation import NOT_THE_LINK, captured, takedown, undo

DLA = str(Path(sys.executable).parent / "dla")


def dla(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "NATS_"))}
    env["DATA_DIR"] = str(data_dir)
    return subprocess.run([DLA, *args], env=env, capture_output=True, text=True, timeout=120)


def test_backup_then_restore_into_a_stopped_archive(tmp_path: Path) -> None:
    source = tmp_path / "a"
    conn = open_db(source / "archive.sqlite3")
    Harness(conn).apply(post("g1", occ("https://x.com/u/status/1")))
    conn.close()
    backup = tmp_path / "public.sqlite3.gz"
    made = dla(source, "backup", "--output", str(backup))
    assert made.returncode == 0, made.stderr
    target = tmp_path / "b"
    target.mkdir()
    (target / "archive.sqlite3").write_bytes(b"an older database")
    done = dla(target, "restore", str(backup))
    assert done.returncode == 0, done.stderr
    assert list(target.glob("archive.sqlite3.before-restore-*"))
    conn = open_db(target / "archive.sqlite3")
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 1
    conn.close()
    # not a backup: refused in one line, nothing replaced
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"not a database")
    refused = dla(target, "restore", str(bad))
    assert refused.returncode == 7, refused.stderr
    assert refused.stderr.startswith("dla: restore refused") and "Traceback" not in refused.stderr


def test_a_backup_with_its_private_part_restores_the_audit_and_undo_windows(
    tmp_path: Path,
) -> None:
    source = tmp_path / "a"
    conn = open_db(source / "archive.sqlite3")
    h = Harness(conn)
    h.apply(post("g1", occ("https://x.com/u/status/1"), occ("https://x.com/u/status/2")))
    h.apply(takedown(2))
    h.apply(
        ExcludeCommand(
            domain="y.com", reason="spam", admin="alice", request_id="e1", requested_at=T0
        )
    )
    audit = [tuple(r) for r in h.rows("SELECT * FROM admin_audit")]
    conn.close()
    public, private = tmp_path / "public.sqlite3.gz", tmp_path / "private.sqlite3.gz"
    made = dla(source, "backup", "--output", str(public), "--private", str(private))
    assert made.returncode == 0, made.stderr
    target = tmp_path / "b"  # an empty data folder
    done = dla(target, "restore", str(public), "--private", str(private))
    assert done.returncode == 0, done.stderr
    conn = open_db(target / "archive.sqlite3")
    h = Harness(conn)
    assert [tuple(r) for r in h.rows("SELECT * FROM admin_audit")] == audit
    # the takedown's undo window came back: the restored writer purges it when it ends
    assert h.tuples("SELECT link_id, request_id FROM takedown_holds") == [(2, "t1")]
    h.advance(days=8)
    assert h.purge() == [2]
    assert h.one("SELECT group_concat(link_id) FROM s3_removals") == "2"
    assert tuple(h.rows("SELECT reason, admin FROM excluded_domains")[0]) == ("spam", "alice")
    h.apply(post("g2", occ("https://x.com/u/status/3")))
    assert h.one("SELECT max(id) FROM links") == 3  # not 2 again: the taken-down link's
    conn.close()
    # without its private part (an older backup): restored as before, with no audit
    again = dla(tmp_path / "c", "restore", str(public))
    assert again.returncode == 0, again.stderr
    conn = open_db(tmp_path / "c" / "archive.sqlite3")
    assert Harness(conn).one("SELECT count(*) FROM admin_audit") == 0
    conn.close()


def test_a_link_taken_down_before_the_backup_can_be_undone_after_a_restore(
    tmp_path: Path,
) -> None:
    source = tmp_path / "a"
    conn = open_db(source / "archive.sqlite3")
    h = Harness(conn)
    job = captured(h)
    before = dump(conn, skip=NOT_THE_LINK)
    h.apply(takedown(job["link_id"]))
    conn.close()
    public, private = tmp_path / "public.sqlite3.gz", tmp_path / "private.sqlite3.gz"
    made = dla(source, "backup", "--output", str(public), "--private", str(private))
    assert made.returncode == 0, made.stderr
    assert b"barn owls" not in gzip.decompress(public.read_bytes())
    target = tmp_path / "b"  # an empty data folder
    done = dla(target, "restore", str(public), "--private", str(private))
    assert done.returncode == 0, done.stderr
    conn = open_db(target / "archive.sqlite3")
    h = Harness(conn, now=T0 + timedelta(days=6))
    h.apply(undo(job["link_id"]))
    assert dump(conn, skip=NOT_THE_LINK) == before
    assert h.tuples("SELECT action, outcome FROM admin_audit ORDER BY id") == [
        ("takedown", "done"),
        ("undo", "done"),
    ]
    conn.close()


def test_a_search_for_nothing_asks_for_words(tmp_path: Path) -> None:
    """Refused before any request (no archive needs to run): an empty table said nothing."""
    for query in ("", "   "):
        done = dla(tmp_path, "search", query)
        assert done.returncode == 2, done
        assert "say what to search for" in done.stderr


def test_a_refused_setting_is_one_line_and_its_own_exit_code(tmp_path: Path) -> None:
    from shared.setting_names import EXIT_CONFIG

    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "NATS_"))}
    env |= {"DATA_DIR": str(tmp_path), "WEB_PORT": "abc"}
    done = subprocess.run([DLA, "status"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_CONFIG
    assert done.stderr.splitlines() == [
        "dla: setting refused: WEB_PORT='abc': Input should be a valid integer, unable to parse"
        " string as an integer"
    ]
    env |= {"WEB_PORT": "1", "LOG_LEVEL": "loud"}  # dla up's own logging: refused before it starts
    done = subprocess.run([DLA, "up"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr
    assert "dla: setting refused: LOG_LEVEL='loud': a logging level is one of" in done.stderr
    assert not (tmp_path / "nats").exists()
