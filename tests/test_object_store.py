"""shared.s3.ObjectStore against a real SeaweedFS (and S3's documented answers): every call the
archive makes, the keys S3 encodes, presigned GETs, errors, a dead endpoint, wrong keys."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from services.supervisor.children import free_ports
from shared.errors import StorageError
from shared.s3 import ObjectStore, S3Answer, uploads_listed
from shared.settings import CommonSettings

pytestmark = pytest.mark.integration


def settings(s3_env: dict[str, str], **extra: str) -> CommonSettings:
    values = {k.lower(): v for k, v in s3_env.items()}
    return CommonSettings.model_validate({**values, **extra})


async def test_objects_round_trip_with_their_metadata(
    s3_env: dict[str, str], tmp_path: Path
) -> None:
    # a space, a plus, a percent sign, non-ASCII: each must be encoded once, and signed so
    for key in ("rt/plain.txt", "rt/a b+c%20d/ü é.html"):
        async with ObjectStore(settings(s3_env)) as store:
            await store.ensure_bucket()
            data = b"<p>" + key.encode() * 100 + b"</p>"
            assert await store.put_bytes(key, data, "text/html") == (
                len(data), hashlib.sha256(data).hexdigest()
            )  # fmt: skip
            assert await store.get_bytes(key) == data
            meta = await store.head(key)
            assert meta is not None
            assert meta["ContentType"] == "text/html" and meta["ContentLength"] == len(data)
            assert isinstance(meta["LastModified"], datetime) and meta["ETag"]
            chunks, length = await store.open(key, (3, 9))
            assert (b"".join([c async for c in chunks]), length) == (data[3:10], 7)
            out = tmp_path / "out"
            await store.download_file(key, out)
            assert out.read_bytes() == data
            await store.copy(key, key + ".copy")
            assert await store.get_bytes(key + ".copy") == data
            assert key in await store.list_keys("rt/")
            await store.delete(key)
            await store.delete(key + ".copy")
            assert await store.head(key) is None
    async with ObjectStore(settings(s3_env)) as store:
        await store.delete("rt/never-there")  # absent is fine
        with pytest.raises(S3Answer) as missing:
            await store.get_bytes("rt/never-there")
        assert missing.value.status == 404 and missing.value.code == "NoSuchKey"
        with pytest.raises(StorageError):
            await store.open("rt/never-there")


async def test_listings_page_past_a_thousand_keys_and_name_folders(s3_env: dict[str, str]) -> None:
    async with ObjectStore(settings(s3_env)) as store:
        await store.ensure_bucket()
        keys = [f"many/{i // 500}/{i:04d}" for i in range(1003)]
        slots = asyncio.Semaphore(16)

        async def put(key: str) -> None:
            async with slots:
                await store.put_bytes(key, b"x", "text/plain")

        await asyncio.gather(*(put(k) for k in keys))
        assert sorted(await store.list_keys("many/")) == sorted(keys)
        assert sorted(await store.list_prefixes("many/")) == ["many/0/", "many/1/", "many/2/"]
        assert await store.list_keys("none-such/") == []


async def test_a_presigned_get_answers_with_the_asked_headers_and_only_unaltered(
    s3_env: dict[str, str],
) -> None:
    async with ObjectStore(settings(s3_env)) as store:
        await store.ensure_bucket()
        await store.put_bytes("signed/page.html", b"<h1>hi</h1>", "text/html")
        url = await store.presigned_get(
            "signed/page.html",
            60,
            content_type="text/plain",
            disposition='attachment; filename="p.txt"',
        )
    async with httpx.AsyncClient() as client:
        got = await client.get(url)
        assert got.status_code == 200 and got.content == b"<h1>hi</h1>"
        assert got.headers["content-type"] == "text/plain"
        assert got.headers["content-disposition"] == 'attachment; filename="p.txt"'
        forged = await client.get(url.replace("text/plain", "text/html"))
        assert forged.url != got.url
        assert forged.status_code == 403


async def test_ensure_bucket_makes_a_new_bucket_once(s3_env: dict[str, str]) -> None:
    async with ObjectStore(settings(s3_env, s3_bucket="made-by-ensure")) as store:
        with pytest.raises(StorageError):
            await store.ping()
        await store.ensure_bucket()
        await store.ensure_bucket()
        await store.ping()
        await store.put_bytes("k", b"v", "text/plain")
        assert await store.get_bytes("k") == b"v"


async def test_a_dead_endpoint_and_wrong_keys_are_storage_errors(s3_env: dict[str, str]) -> None:
    (dead,) = free_ports(1)
    async with ObjectStore(settings(s3_env, s3_endpoint=f"http://127.0.0.1:{dead}")) as store:
        with pytest.raises(StorageError, match="unreachable"):
            await store.put_bytes("k", b"v", "text/plain")
        with pytest.raises(StorageError):
            await store.list_keys("")
    wrong = settings(s3_env, aws_secret_access_key="not-the-secret-0123456789")
    async with ObjectStore(wrong) as store:
        with pytest.raises(S3Answer) as refused:
            await store.put_bytes("k", b"v", "text/plain")
        assert refused.value.status == 403
        assert "not-the-secret" not in str(refused.value)
    bare = CommonSettings.model_validate({"s3_endpoint": s3_env["S3_ENDPOINT"]})
    async with ObjectStore(bare) as store:
        with pytest.raises(StorageError, match="no S3 credentials"):
            await store.head("k")


def test_aws_s3s_documented_list_of_uploads_is_read() -> None:
    # ListMultipartUploads' example answer in the Amazon S3 API reference (trimmed)
    answer = b"""<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>bucket</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>my-movie.m2ts</NextKeyMarker>
  <NextUploadIdMarker>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</NextUploadIdMarker>
  <MaxUploads>3</MaxUploads><IsTruncated>true</IsTruncated>
  <Upload>
    <Key>my-divisor</Key>
    <UploadId>XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw</UploadId>
    <Initiator><ID>arn:aws:iam::111122223333:user/user1-11111a31-17b5</ID></Initiator>
    <StorageClass>STANDARD</StorageClass><Initiated>2010-11-10T20:48:33.000Z</Initiated>
  </Upload>
  <Upload>
    <Key>my-movie.m2ts</Key>
    <UploadId>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
    <StorageClass>STANDARD</StorageClass><Initiated>2010-11-10T20:48:33.000Z</Initiated>
  </Upload>
</ListMultipartUploadsResult>"""
    assert uploads_listed(answer) == [
        ("my-divisor", "XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw"),
        ("my-movie.m2ts", "VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA"),
    ]
