"""The object store: artifacts and backups in an S3-compatible bucket (aioboto3)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncGenerator
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import aioboto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from shared.errors import StorageError
from shared.settings import CommonSettings

_CHUNK = 1 << 20
PART_SIZE = 8 << 20
"""Bytes per multipart part (S3 wants >= 5 MiB except the last); also the single-PUT limit."""
UPLOAD_PARTS_IN_FLIGHT = 2
"""Parts of one file being sent at once: throughput without holding the file in memory. Each
part in flight costs ~13 MB here and ~30 MB in SeaweedFS, which buffers it: with 4, a 100 MB
upload added 82 MB to the uploader and ~130 MB to weed (the hostile-page benchmark's peak);
with 2, 56 and ~65 MB, at the same MB/s on this machine (a capture's large bodies and the
media worker's files go through here)."""


class ObjectStore:
    """An async S3 client bound to one bucket; use as ``async with ObjectStore(settings)``."""

    def __init__(self, settings: CommonSettings) -> None:
        self.bucket = settings.s3_bucket
        self._settings = settings
        self._client: Any = None
        self._ctx: Any = None

    def _client_kwargs(self) -> dict[str, Any]:
        s = self._settings
        kwargs: dict[str, Any] = {
            "region_name": s.s3_region,
            "config": Config(
                signature_version="s3v4",
                s3={"addressing_style": "path" if s.s3_force_path_style else "auto"},
                retries={"max_attempts": 2, "mode": "standard"},
                connect_timeout=5,
                read_timeout=60,
            ),
        }
        if s.s3_endpoint:
            kwargs["endpoint_url"] = s.s3_endpoint
        if s.aws_access_key_id and s.aws_secret_access_key:
            kwargs["aws_access_key_id"] = s.aws_access_key_id.get_secret_value()
            kwargs["aws_secret_access_key"] = s.aws_secret_access_key.get_secret_value()
        return kwargs

    async def __aenter__(self) -> ObjectStore:
        session = aioboto3.Session()
        self._ctx = session.client("s3", **self._client_kwargs())
        self._client = await self._ctx.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._ctx is not None:
            await self._ctx.__aexit__(exc_type, exc, tb)
        self._client = self._ctx = None

    @property
    def client(self) -> Any:
        """The underlying aioboto3 client."""
        if self._client is None:
            raise StorageError("ObjectStore used outside 'async with'")
        return self._client

    async def ping(self) -> None:
        """Raise StorageError unless the bucket answers a HEAD request."""
        try:
            await self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            raise StorageError(f"bucket {self.bucket}: {exc}") from exc
        except (BotoCoreError, OSError) as exc:
            raise StorageError(f"S3 unreachable: {exc}") from exc

    async def ensure_bucket(self) -> None:
        """Create the bucket if it does not exist (idempotent)."""
        try:
            await self.client.head_bucket(Bucket=self.bucket)
            return
        except ClientError:
            pass
        except (BotoCoreError, OSError) as exc:
            raise StorageError(f"S3 unreachable: {exc}") from exc
        try:
            await self.client.create_bucket(Bucket=self.bucket)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise StorageError(f"cannot create bucket {self.bucket}: {exc}") from exc
        except (BotoCoreError, OSError) as exc:
            raise StorageError(f"S3 unreachable: {exc}") from exc

    async def put_bytes(self, key: str, data: bytes, content_type: str) -> tuple[int, str]:
        """Upload bytes; returns (size, sha256)."""
        digest = hashlib.sha256(data).hexdigest()
        try:
            await self.client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=content_type
            )
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"upload of {key} failed: {exc}") from exc
        return len(data), digest

    async def put_file(self, key: str, path: Path, content_type: str) -> tuple[int, str]:
        """Upload a file, hashing it on the way; returns (size, sha256).

        One pass over the file: a file smaller than one part is one PUT; a larger one is a
        multipart upload whose parts are read, hashed and sent as they come, at most
        ``UPLOAD_PARTS_IN_FLIGHT`` at once, so memory stays near part size x parts in flight
        whatever the file's size (bench/bench_media.py). A failed multipart upload is
        aborted (no orphan parts left in the bucket)."""
        try:
            with path.open("rb") as fh:
                first = await asyncio.to_thread(fh.read, PART_SIZE)
                if len(first) < PART_SIZE:
                    return await self.put_bytes(key, first, content_type)
                return await self._multipart(key, fh, first, content_type)
        except OSError as exc:
            raise StorageError(f"upload of {key} failed: {exc}") from exc

    async def _multipart(
        self, key: str, fh: BinaryIO, first: bytes, content_type: str
    ) -> tuple[int, str]:
        try:
            created = await self.client.create_multipart_upload(
                Bucket=self.bucket, Key=key, ContentType=content_type
            )
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"upload of {key} failed: {exc}") from exc
        upload_id = created["UploadId"]
        digest = hashlib.sha256()
        size = 0
        parts: dict[int, str] = {}
        slots = asyncio.Semaphore(UPLOAD_PARTS_IN_FLIGHT)

        async def send(number: int, data: bytes) -> None:
            try:
                resp = await self.client.upload_part(
                    Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data
                )
                parts[number] = resp["ETag"]
            finally:
                slots.release()

        try:
            async with asyncio.TaskGroup() as group:
                number, data = 1, first
                while data:
                    digest.update(data)
                    size += len(data)
                    await slots.acquire()
                    group.create_task(send(number, data))
                    del data  # the task holds the only reference; freed once it is sent
                    number += 1
                    data = await asyncio.to_thread(fh.read, PART_SIZE)
            await self.client.complete_multipart_upload(
                Bucket=self.bucket,
                Key=key,
                UploadId=upload_id,
                MultipartUpload={
                    "Parts": [{"PartNumber": n, "ETag": parts[n]} for n in sorted(parts)]
                },
            )
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await self.client.abort_multipart_upload(
                    Bucket=self.bucket, Key=key, UploadId=upload_id
                )
            if isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            if isinstance(exc, (BotoCoreError, ClientError, OSError)):
                raise StorageError(f"upload of {key} failed: {exc}") from exc
            raise
        return size, digest.hexdigest()

    async def abort_incomplete_uploads(self, prefix: str) -> int:
        """Abort multipart uploads left under a prefix (a worker killed mid-upload);
        returns how many were aborted."""
        aborted = 0
        try:
            resp = await self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=prefix)
            for upload in resp.get("Uploads", []):
                await self.client.abort_multipart_upload(
                    Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                )
                aborted += 1
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"cleaning uploads under {prefix} failed: {exc}") from exc
        return aborted

    async def get_bytes(self, key: str) -> bytes:
        """Download an object into memory."""
        try:
            resp = await self.client.get_object(Bucket=self.bucket, Key=key)
            async with resp["Body"] as body:
                data: bytes = await body.read()
                return data
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"download of {key} failed: {exc}") from exc

    async def head(self, key: str) -> dict[str, Any] | None:
        """Object metadata, or None when absent."""
        try:
            resp: dict[str, Any] = await self.client.head_object(Bucket=self.bucket, Key=key)
            return resp
        except ClientError:
            return None
        except (BotoCoreError, OSError) as exc:
            raise StorageError(f"head of {key} failed: {exc}") from exc

    async def download_file(self, key: str, path: Path) -> None:
        """Download an object to a file."""
        try:
            await self.client.download_file(self.bucket, key, str(path))
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"download of {key} failed: {exc}") from exc

    async def list_keys(self, prefix: str) -> list[str]:
        """Every key under a prefix."""
        keys: list[str] = []
        try:
            paginator = self.client.get_paginator("list_objects_v2")
            async for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                keys.extend(obj["Key"] for obj in page.get("Contents", []))
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"listing {prefix} failed: {exc}") from exc
        return keys

    async def list_prefixes(self, prefix: str) -> list[str]:
        """The "folders" right under a prefix (``<prefix><name>/``), one request per 1000."""
        found: list[str] = []
        try:
            paginator = self.client.get_paginator("list_objects_v2")
            async for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix, Delimiter="/"):
                found.extend(str(p["Prefix"]) for p in page.get("CommonPrefixes", []))
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"listing {prefix} failed: {exc}") from exc
        return found

    async def delete(self, key: str) -> None:
        """Delete an object (absent is fine)."""
        try:
            await self.client.delete_object(Bucket=self.bucket, Key=key)
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"delete of {key} failed: {exc}") from exc

    async def copy(self, src: str, dest: str) -> None:
        """Copy an object within the bucket."""
        try:
            await self.client.copy_object(
                Bucket=self.bucket, Key=dest, CopySource={"Bucket": self.bucket, "Key": src}
            )
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"copy of {src} failed: {exc}") from exc

    async def presigned_get(
        self,
        key: str,
        expires_s: int = 3600,
        *,
        content_type: str | None = None,
        disposition: str | None = None,
    ) -> str:
        """A time-limited GET URL for an object; S3 answers it with these Content-Type and
        Content-Disposition headers when given (response-content-type/-disposition)."""
        params: dict[str, str] = {"Bucket": self.bucket, "Key": key}
        if content_type:
            params["ResponseContentType"] = content_type
        if disposition:
            params["ResponseContentDisposition"] = disposition
        url: str = await self.client.generate_presigned_url(
            "get_object", Params=params, ExpiresIn=expires_s
        )
        return url

    async def open(
        self, key: str, byte_range: tuple[int, int] | None = None
    ) -> tuple[AsyncGenerator[bytes, None], int]:
        """An object's bytes (only ``first`` to ``last``, both included, with a
        ``byte_range``) as a stream of chunks, and their length; raises StorageError (before
        any byte is read) when it cannot be had."""
        extra = {} if byte_range is None else {"Range": f"bytes={byte_range[0]}-{byte_range[1]}"}
        try:
            resp = await self.client.get_object(Bucket=self.bucket, Key=key, **extra)
        except (BotoCoreError, ClientError, OSError) as exc:
            raise StorageError(f"download of {key} failed: {exc}") from exc
        body = resp["Body"]

        async def chunks() -> AsyncGenerator[bytes, None]:
            try:
                async for chunk in body.iter_chunks(_CHUNK):
                    yield chunk
            finally:
                body.close()

        return chunks(), int(resp.get("ContentLength", 0))
