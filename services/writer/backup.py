"""Database backups to S3 (``VACUUM INTO``, made publishable, gzip, upload) and restore.

A backup is the publishable database: taken-down links, the private admin tables and the
private session files of logged-in captures are left out (`make_publishable`); the takedown
tombstones (hashes, see ``tombstones.py``) and the link id high-water mark stay, so a
restored database still refuses the URLs taken down and never gives a link id twice.
Beside it, from the same copy, the *private* part: the rows the publishable copy leaves out
or blanks, except a link's purged at its takedown or at the end of its undo window
(``backup_rows``: the audit trail, the S3 removals still queued, the takedowns' undo windows
(so a restored database still purges in time) and every row of the links taken down within
them (so an undo on a restored database shows them again exactly as before), who excluded a
domain and why, the private session files' rows) in a small SQLite file.

Keys: see ``shared/backup_layout.py``. Restore: ``python -m services.writer restore
[--date YYYY-MM-DD]`` downloads the backup (default: the newest) and its private part (when
there is one: older backups have none), puts the private rows back, raises the link id
high-water mark to the largest link prefix in the bucket, checks ``PRAGMA
integrity_check``, and installs it atomically in place of ``DATABASE_PATH`` (the old file
is kept beside it). It refuses to run while a writer holds the database.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import logging
import os
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from services.writer import backup_rows
from services.writer.db import writer_lock
from shared.backup_layout import (
    NAME,
    PREFIX,
    PRIVATE_NAME,
    backup_dates,
    backup_key,
    is_backup_date,
    key_of_date,
    private_key_of_date,
)
from shared.errors import ArchiverError, ConfigError, StorageError
from shared.settings import CommonSettings

if TYPE_CHECKING:
    from shared.s3 import ObjectStore

log = logging.getLogger(__name__)


class RestoreError(ArchiverError):
    """A backup cannot be restored (absent, corrupt, writer running)."""


def _object_store(settings: CommonSettings) -> ObjectStore:
    """The bucket. shared.s3 (aiohttp and its S3 client) is loaded only when S3 is
    used: `publish` and `restore --file` (each `dla backup`, `dla restore`) never use it."""
    from shared.s3 import ObjectStore

    return ObjectStore(settings)


def snapshot_to(db_path: Path, dest_gz: Path, private_gz: Path | None = None) -> int:
    """A consistent gzip'ed publishable copy of the database (VACUUM INTO through a read-only
    connection, so the writer keeps committing meanwhile), and with private_gz the private
    rows of the same copy (`private_part`). Returns the publishable copy's size."""
    raw = dest_gz.with_suffix("")
    raw.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        src.execute("VACUUM INTO ?", (str(raw),))
    finally:
        src.close()
    try:
        if private_gz is not None:
            private_part(raw, private_gz)
        make_publishable(raw)
    except BaseException:
        raw.unlink(missing_ok=True)
        raise
    _gzip_away(raw, dest_gz)
    return dest_gz.stat().st_size


def _gzip_away(raw: Path, dest_gz: Path) -> None:
    """Compress raw into dest_gz, then delete raw."""
    try:
        with raw.open("rb") as fin, gzip.open(dest_gz, "wb", compresslevel=6) as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
    finally:
        raw.unlink(missing_ok=True)


def private_part(copy: Path, dest_gz: Path) -> None:
    """The private rows of a database copy, and every row of the links whose takedown can
    still be undone (`backup_rows.private_part_rows`), with their tables' schema, as a
    gzip'ed SQLite file: what the publishable copy leaves out and a restore puts back."""
    raw = dest_gz.with_suffix("")
    raw.unlink(missing_ok=True)
    conn = sqlite3.connect(raw, isolation_level=None)
    try:
        conn.execute("ATTACH DATABASE ? AS copy", (str(copy),))
        conn.execute("BEGIN")
        full_text = backup_rows.virtual_tables(conn, "copy")
        tables = backup_rows.columns(conn, "copy")
        for table, (where, args) in backup_rows.private_part_rows(tables, "copy").items():
            row = conn.execute(
                "SELECT sql FROM copy.sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            conn.execute(str(row[0]))  # created in main: the private file
            cols = _copied(tables[table], table in full_text)
            conn.execute(
                f'INSERT INTO main."{table}" ({cols}) SELECT {cols} FROM copy."{table}"'
                f" WHERE {where}",
                args,
            )
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE copy")
    except BaseException:
        conn.close()
        raw.unlink(missing_ok=True)
        raise
    conn.close()
    _gzip_away(raw, dest_gz)


def _copied(columns: set[str], full_text: bool) -> str:
    """The column list that copies a table's rows whole: a full-text table's rowid too (it is
    the link's id in ``link_text_fts``, the order in ``link_text_history``)."""
    names = [f'"{c}"' for c in sorted(columns)]
    return ", ".join(["rowid", *names] if full_text else names)


def put_back_private(db: Path, private_raw: Path) -> int:
    """Copy the rows of a private part (`private_part`) into a restored database copy (whose
    private tables the publishable backup left empty, and which has no row of a taken-down
    link); returns how many rows."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("ATTACH DATABASE ? AS private", (str(private_raw),))
        conn.execute("BEGIN")
        added = 0
        ours = backup_rows.columns(conn, "main")
        full_text = backup_rows.virtual_tables(conn, "private")
        for table, theirs in backup_rows.columns(conn, "private").items():
            shared = theirs & ours.get(table, set())
            if shared:  # (replacing the blanked rows of excluded domains)
                cols = _copied(shared, table in full_text)
                added += conn.execute(
                    f'INSERT OR REPLACE INTO main."{table}" ({cols})'
                    f' SELECT {cols} FROM private."{table}"'
                ).rowcount
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise RestoreError(f"the private part is not usable: {exc}") from exc
    finally:
        conn.close()
    return added


def raise_high_water(db: Path, link_ids: list[int]) -> None:
    """Make the restored copy's next link id larger than every one of link_ids (ids the
    bucket still holds objects of). A backup made before schema version 17 has no mark: its
    migration then starts from the largest link id in it."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'id_high_water'"
        ).fetchone():
            conn.execute(
                """UPDATE "id_high_water" SET max_id = max(max_id, ?) WHERE name = 'links'""",
                (max(link_ids, default=0),),
            )
        else:
            log.warning(
                "the backup predates the link id high-water mark (schema 17): the ids of"
                " links made after it may be given again"
            )
    finally:
        conn.close()


def make_publishable(path: Path) -> None:
    """Remove from a database copy what the public must not see: every row of taken-down
    links (secure_delete, then VACUUM, so no freed page keeps them; the full-text indexes
    merged into one segment, so no older segment keeps the words of a deleted row), the
    private tables, who excluded a domain and why, and the private session files of
    logged-in captures (their rows, which name their S3 keys). The takedown tombstones stay: they
    are how a database restored from the copy still knows the URLs taken down."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA secure_delete = ON")
        columns = backup_rows.columns(conn, "main")
        conn.execute("BEGIN")
        # (quoted names: this edits a copy, not the database whose tables have owners)
        for table, where in backup_rows.taken_down_rows(columns).items():
            conn.execute(f'DELETE FROM "{table}" WHERE {where}')
        for table, (where, args) in backup_rows.private_rows(columns).items():
            if table in backup_rows.BLANKED:  # the rows stay, their private columns blanked
                blanked = backup_rows.BLANKED[table]
                conn.execute(f'UPDATE "{table}" SET {blanked} WHERE {where}', args)
            else:  # (the private tables emptied, not dropped: a restore must stay migrated)
                conn.execute(f'DELETE FROM "{table}" WHERE {where}', args)
        for (fts,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%'"
        ).fetchall():
            # a deleted row's tokens stay in the index's older segments until they are merged
            conn.execute(f"""INSERT INTO "{fts}" ("{fts}") VALUES ('optimize')""")
        conn.execute("COMMIT")
        conn.execute("VACUUM")
    finally:
        conn.close()


async def backup(settings: CommonSettings, now: datetime | None = None) -> str:
    """Back the database up to S3; returns the key. Raises StorageError."""
    key = backup_key(now or datetime.now(UTC))
    private_key = private_key_of_date(key.split("/")[1])
    with tempfile.TemporaryDirectory(dir=settings.db_path.parent, prefix=".backup-") as tmp:
        gz, private_gz = Path(tmp) / NAME, Path(tmp) / PRIVATE_NAME
        size = await asyncio.to_thread(snapshot_to, settings.db_path, gz, private_gz)
        async with _object_store(settings) as store:
            await store.ensure_bucket()
            # the private part first: a publishable copy is never newer than its private part
            await store.put_file(private_key, private_gz, "application/gzip")
            await store.put_file(key, gz, "application/gzip")
    log.info("database backed up to %s (%d bytes) and %s", key, size, private_key)
    return key


async def has_backup(settings: CommonSettings, now: datetime | None = None) -> bool:
    """True when today's backup exists."""
    async with _object_store(settings) as store:
        return await store.head(backup_key(now or datetime.now(UTC))) is not None


async def latest_date(store: ObjectStore) -> str:
    """The newest backup's date."""
    dates = backup_dates(await store.list_keys(PREFIX))
    if not dates:
        raise RestoreError(f"no backup under {PREFIX} in bucket {store.bucket}")
    return dates[-1]


async def latest_time(settings: CommonSettings) -> datetime | None:
    """When the newest backup was stored (its object's Last-Modified), or None."""
    async with _object_store(settings) as store:
        try:
            day = await latest_date(store)
        except RestoreError:
            return None
        meta = await store.head(f"{PREFIX}{day}/{NAME}")
    modified = None if meta is None else meta.get("LastModified")
    return modified if isinstance(modified, datetime) else None


def check_integrity(path: Path) -> None:
    """Raise RestoreError unless PRAGMA integrity_check says ok."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise RestoreError(f"not a database: {exc}") from exc
    if rows != [("ok",)]:
        raise RestoreError(f"integrity_check failed: {rows[:5]}")


async def restore(settings: CommonSettings, date: str | None = None) -> Path | None:
    """Install a backup as the database; returns where the previous file was kept (if any)."""
    db_path = settings.db_path
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        writer_lock(db_path),
        tempfile.TemporaryDirectory(dir=db_path.parent, prefix=".restore-") as tmp,
    ):
        gz, raw = Path(tmp) / NAME, Path(tmp) / "archive.sqlite3"
        private_gz: Path | None = None
        async with _object_store(settings) as store:
            day = date or await latest_date(store)
            if not is_backup_date(day):
                raise RestoreError(f"bad date {day!r}; expected YYYY-MM-DD")
            key, private_key = key_of_date(day), private_key_of_date(day)
            try:
                await store.download_file(key, gz)
                if await store.head(private_key) is None:
                    log.warning("%s has no private part: no audit trail or queued removal", key)
                else:
                    private_gz = Path(tmp) / PRIVATE_NAME
                    await store.download_file(private_key, private_gz)
                link_ids = await link_ids_in_bucket(store, settings.s3_prefix)
            except StorageError as exc:
                raise RestoreError(f"cannot download {key}: {exc}") from exc
        await asyncio.to_thread(_unpack, gz, raw, private_gz)
        await asyncio.to_thread(raise_high_water, raw, link_ids)
        previous = await asyncio.to_thread(_replace, raw, db_path)
    log.info("restored %s into %s", key, db_path)
    return previous


async def link_ids_in_bucket(store: ObjectStore, s3_prefix: str) -> list[int]:
    """The link ids that have a prefix (``archives/<id>/``) in the bucket."""
    ids = (p.removeprefix(s3_prefix).rstrip("/") for p in await store.list_prefixes(s3_prefix))
    return [int(i) for i in ids if i.isdigit()]


def _unpack(gz: Path, raw: Path, private_gz: Path | None) -> None:
    """Unzip a backup into raw, check its integrity, put its private part's rows back."""
    _unzip(gz, raw)
    check_integrity(raw)
    if private_gz is not None:
        private_raw = raw.with_name("private.sqlite3")
        _unzip(private_gz, private_raw)
        check_integrity(private_raw)
        rows = put_back_private(raw, private_raw)
        private_raw.unlink()
        log.info("%d private row(s) put back", rows)


def _replace(raw: Path, db_path: Path) -> Path | None:
    """Install raw as the database; returns where the previous file was kept (if any)."""
    previous: Path | None = None
    if db_path.exists():
        stamp = f"{datetime.now(UTC):%Y%m%dT%H%M%S}"
        previous = db_path.with_name(f"{db_path.name}.before-restore-{stamp}")
        os.replace(db_path, previous)
    _install(raw, db_path)
    return previous


def install_file(src: Path, db_path: Path, private: Path | None = None) -> Path | None:
    """Install a local backup file (gzip'ed or not) as the database after an integrity check,
    with the rows of its private part (the gzip'ed ``private.sqlite3.gz`` stored beside it
    in the bucket) when given; returns where the previous file was kept. Refuses
    (ConfigError) while a writer runs."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with (
        writer_lock(db_path),
        tempfile.TemporaryDirectory(dir=db_path.parent, prefix=".restore-") as tmp,
    ):
        raw = Path(tmp) / "archive.sqlite3"
        _unpack(src, raw, private)
        previous = _replace(raw, db_path)
    log.info("restored %s into %s", src, db_path)
    return previous


def remove_leftovers(db_path: Path) -> None:
    """Delete temporary folders a backup or restore killed mid-way left beside the database."""
    for leftover in db_path.parent.glob(".backup-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in db_path.parent.glob(".restore-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _unzip(src: Path, dest: Path) -> None:
    """Unzip src into dest (copied if it is not gzip'ed)."""
    with src.open("rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    if gzipped:
        _gunzip(src, dest)
    else:
        shutil.copyfile(src, dest)


def _gunzip(src: Path, dest: Path) -> None:
    try:
        with gzip.open(src, "rb") as fin, dest.open("wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
            fout.flush()
            os.fsync(fout.fileno())
    except (OSError, EOFError) as exc:
        raise RestoreError(f"backup is not a valid gzip file: {exc}") from exc


def _install(raw: Path, db_path: Path) -> None:
    """Move the checked copy into place; a stale WAL of the old file must not survive."""
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    os.replace(raw, db_path)
    _fsync_dir(db_path.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def restore_cli(argv: list[str], settings: CommonSettings) -> int:
    """``python -m services.writer restore [--date YYYY-MM-DD | --file FILE]``; exit code."""
    parser = argparse.ArgumentParser(prog="python -m services.writer restore")
    parser.add_argument("--date", help="UTC date of the backup in S3 (default: the newest)")
    parser.add_argument("--file", type=Path, help="a local backup file instead (.gz or not)")
    parser.add_argument(
        "--private", type=Path, help=f"with --file: its private part ({PRIVATE_NAME})"
    )
    args = parser.parse_args(argv)
    if args.private is not None and args.file is None:
        parser.error("--private goes with --file")
    try:
        if args.file is not None:
            previous = install_file(args.file, settings.db_path, args.private)
        else:
            previous = asyncio.run(restore(settings, args.date))
    except ConfigError as exc:
        log.error("restore refused: %s", exc)
        return 3
    except (ArchiverError, OSError) as exc:
        log.error("restore failed: %s", exc)
        return 1
    kept = f" (previous file kept as {previous.name})" if previous else ""
    print(f"restored {settings.db_path}{kept}")
    return 0


def publish_cli(argv: list[str], settings: CommonSettings) -> int:
    """``python -m services.writer publish --output FILE [--private-output FILE]``: the
    publishable database, gzip'ed, and its private part (read-only on the live database; the
    writer may run)."""
    parser = argparse.ArgumentParser(prog="python -m services.writer publish")
    parser.add_argument("--output", type=Path, required=True, help="the .gz file to write")
    parser.add_argument(
        "--private-output", type=Path, help=f"where to write its private part ({PRIVATE_NAME})"
    )
    args = parser.parse_args(argv)
    if not settings.db_path.exists():
        log.error("no database at %s", settings.db_path)
        return 1
    private = None if args.private_output is None else args.private_output.resolve()
    try:
        size = snapshot_to(settings.db_path, args.output.resolve(), private)
    except (sqlite3.Error, OSError) as exc:
        log.error("publishable copy failed: %s", exc)
        return 1
    print(f"{args.output} {size}")
    return 0
