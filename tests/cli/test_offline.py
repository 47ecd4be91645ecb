"""`dla` commands that need no running stack: backup and restore of a database file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from services.writer.db import open_db
from testkit.writer_harness import Harness, occ, post

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
