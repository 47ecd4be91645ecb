"""The object store: artifacts and backups in an S3-compatible bucket.

The client is aiohttp-s3-client (SigV4 signing by aws-request-signer, requests by aiohttp,
which every service already loads for NATS): ~1 MB a process. aioboto3 was ~42 MB in each of
the four services that hold a store (botocore's modules, then the S3 service model it loads
for a client), a tenth of the stack's memory at rest (docs/benchmarks.md, "The S3 client").
The few S3 calls the archive makes are written here on the client's signed `request`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO
from urllib.parse import quote
from xml.etree import ElementTree

import aiohttp
from aiohttp_s3_client import S3Client
from aiohttp_s3_client.credentials import StaticCredentials, collect_credentials
from aiohttp_s3_client.xml import (
    create_complete_upload_request,
    parse_create_multipart_upload_id,
)
from yarl import URL

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
CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 60.0
"""Seconds to connect, and between two reads of an answer, before a request fails."""
RETRY_PAUSE_S = 0.2
"""A request that failed to connect or got a 500/502/503/504 is sent once more after this
pause (the body is bytes, so it can be): a restarting S3 or a dropped keep-alive connection
is not an error; anything longer is the caller's to retry."""
_RETRY_STATUS = frozenset({500, 502, 503, 504})
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
_RAISE: Any = object()
"""`_send`'s default for a 404: an error like any other status."""
_FAILURES = (aiohttp.ClientError, OSError, TimeoutError)


class S3Answer(StorageError):
    """S3 answered a request with an error status; `code` is its error Code (NoSuchKey...)."""

    def __init__(self, what: str, status: int, code: str, message: str) -> None:
        super().__init__(f"{what}: S3 answered {status} {code or ''} {message}".rstrip())
        self.status, self.code = status, code


def bucket_url(settings: CommonSettings) -> URL:
    """The bucket's base URL: `<endpoint>/<bucket>` (path style, as SeaweedFS and MinIO want)
    or `<bucket>.<endpoint's host>`; AWS's regional endpoint when no endpoint is set."""
    endpoint = URL(settings.s3_endpoint or f"https://s3.{settings.s3_region}.amazonaws.com")
    if settings.s3_force_path_style:
        return endpoint / settings.s3_bucket
    return endpoint.with_host(f"{settings.s3_bucket}.{endpoint.host}")


def credentials(settings: CommonSettings) -> StaticCredentials | None:
    """The settings' keys; else AWS_* in the environment or ~/.aws (as the AWS tools read);
    None when there are none."""
    if settings.aws_access_key_id and settings.aws_secret_access_key:
        return StaticCredentials(
            access_key_id=settings.aws_access_key_id.get_secret_value(),
            secret_access_key=settings.aws_secret_access_key.get_secret_value(),
            region=settings.s3_region,
        )
    found = collect_credentials(region=settings.s3_region)
    return found if found else None


async def _error(what: str, resp: aiohttp.ClientResponse) -> S3Answer:
    """The S3Answer for an error response (its XML Code and Message when it sent them)."""
    code = message = ""
    with contextlib.suppress(*_FAILURES, ElementTree.ParseError):
        body = await resp.read()
        if body:
            root = ElementTree.fromstring(body)
            code = root.findtext("Code") or root.findtext(f"{_NS}Code") or ""
            message = root.findtext("Message") or root.findtext(f"{_NS}Message") or ""
    return S3Answer(what, resp.status, code, message)


class ObjectStore:
    """An async S3 client bound to one bucket; use as ``async with ObjectStore(settings)``."""

    def __init__(self, settings: CommonSettings) -> None:
        self.bucket = settings.s3_bucket
        self._settings = settings
        self._session: aiohttp.ClientSession | None = None
        self._client: S3Client | None = None

    async def __aenter__(self) -> ObjectStore:
        timeout = aiohttp.ClientTimeout(
            total=None, connect=CONNECT_TIMEOUT_S, sock_read=READ_TIMEOUT_S
        )
        # bytes as stored: no Accept-Encoding sent, nothing decoded
        self._session = aiohttp.ClientSession(
            timeout=timeout, auto_decompress=False, skip_auto_headers=("Accept-Encoding",)
        )
        keys = credentials(self._settings)
        if keys is not None:  # without keys every call fails, as a request would (`client`)
            self._client = S3Client(self._session, bucket_url(self._settings), credentials=keys)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = self._client = None

    @property
    def client(self) -> S3Client:
        """The underlying aiohttp-s3-client client."""
        if self._client is None:
            if self._session is None:
                raise StorageError("ObjectStore used outside 'async with'")
            raise StorageError("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        return self._client

    async def _send(
        self,
        what: str,
        method: str,
        key: str = "",
        *,
        ok: Callable[[aiohttp.ClientResponse], Awaitable[Any]],
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        data: bytes | None = None,
        sha: str | None = None,
        missing: Any = _RAISE,
    ) -> Any:
        """Send one signed request (once more after a dropped connection or a 5xx) and
        return `ok(response)`; a 404 returns `missing` when given; any other error status or
        failure raises StorageError naming `what`. The body is signed by its `sha` (sha256
        hex), computed when not given."""
        if sha is None:
            sha = _EMPTY_SHA256 if data is None else hashlib.sha256(data).hexdigest()
        attempt = 1
        while True:
            try:
                async with self.client.request(
                    method, key, headers=headers or {}, params=params, data=data,
                    content_sha256=sha,
                ) as resp:  # fmt: skip
                    if resp.status < 300:
                        return await ok(resp)
                    if resp.status == 404 and missing is not _RAISE:
                        return missing
                    if resp.status not in _RETRY_STATUS or attempt == 2:
                        raise await _error(what, resp)
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                if attempt == 2:
                    raise StorageError(f"{what}: S3 unreachable: {exc}") from exc
            except (aiohttp.ClientError, OSError) as exc:
                raise StorageError(f"{what}: {exc}") from exc
            await asyncio.sleep(RETRY_PAUSE_S)
            attempt += 1

    async def ping(self) -> None:
        """Raise StorageError unless the bucket answers a HEAD request."""
        await self._send(f"bucket {self.bucket}", "HEAD", ok=_nothing)

    async def ensure_bucket(self) -> None:
        """Create the bucket if it does not exist (idempotent)."""
        if await self._send(f"bucket {self.bucket}", "HEAD", ok=_true, missing=False):
            return
        region = self._settings.s3_region
        body = None
        if region != "us-east-1":  # S3 wants the region named for any other
            body = (
                '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>"
            ).encode()
        try:
            await self._send(f"cannot create bucket {self.bucket}", "PUT", ok=_nothing, data=body)
        except S3Answer as exc:
            if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise

    async def put_bytes(self, key: str, data: bytes, content_type: str) -> tuple[int, str]:
        """Upload bytes; returns (size, sha256)."""
        digest = hashlib.sha256(data).hexdigest()
        await self._send(
            f"upload of {key}", "PUT", key, ok=_nothing, data=data, sha=digest,
            headers={"Content-Type": content_type},
        )  # fmt: skip
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
        what = f"upload of {key}"
        upload_id: str = await self._send(
            what, "POST", key, ok=_upload_id, params={"uploads": ""},
            headers={"Content-Type": content_type},
        )  # fmt: skip
        digest = hashlib.sha256()
        size = 0
        parts: dict[int, str] = {}
        slots = asyncio.Semaphore(UPLOAD_PARTS_IN_FLIGHT)

        async def send(number: int, data: bytes) -> None:
            try:
                parts[number] = await self._send(
                    what, "PUT", key, ok=_etag, data=data,
                    params={"partNumber": str(number), "uploadId": upload_id},
                )  # fmt: skip
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
            done = create_complete_upload_request(sorted(parts.items()))
            await self._send(
                what, "POST", key, ok=_no_error_inside(what), data=done,
                params={"uploadId": upload_id}, headers={"Content-Type": "application/xml"},
            )  # fmt: skip
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await self._abort(key, upload_id)
            if isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            if isinstance(exc, StorageError):
                raise exc from None
            if isinstance(exc, OSError):
                raise StorageError(f"{what} failed: {exc}") from exc
            raise
        return size, digest.hexdigest()

    async def _abort(self, key: str, upload_id: str) -> None:
        await self._send(
            f"abort of {key}'s upload", "DELETE", key, ok=_nothing, missing=None,
            params={"uploadId": upload_id},
        )  # fmt: skip

    async def incomplete_uploads(self, prefix: str) -> list[tuple[str, str]]:
        """(key, upload id) of every multipart upload begun and not completed under a prefix
        (the first 1000: a worker leaves a few)."""
        return list(
            await self._send(
                f"listing uploads under {prefix}", "GET", ok=_uploads,
                params={"uploads": "", "prefix": prefix},
            )
        )  # fmt: skip

    async def abort_incomplete_uploads(self, prefix: str) -> int:
        """Abort multipart uploads left under a prefix (a worker killed mid-upload);
        returns how many were aborted."""
        found = await self.incomplete_uploads(prefix)
        for key, upload_id in found:
            await self._abort(key, upload_id)
        return len(found)

    async def get_bytes(self, key: str) -> bytes:
        """Download an object into memory."""
        data: bytes = await self._send(f"download of {key}", "GET", key, ok=_body)
        return data

    async def head(self, key: str) -> dict[str, Any] | None:
        """Object metadata (ContentLength, ContentType, ETag, LastModified), or None when
        absent."""
        found: dict[str, Any] | None = await self._send(
            f"head of {key}", "HEAD", key, ok=_meta, missing=None
        )
        return found

    async def download_file(self, key: str, path: Path) -> None:
        """Download an object to a file, a chunk at a time."""
        chunks, _ = await self.open(key)
        try:
            with path.open("wb") as out:
                async for chunk in chunks:
                    await asyncio.to_thread(out.write, chunk)
        except _FAILURES as exc:
            raise StorageError(f"download of {key} failed: {exc}") from exc
        finally:
            await chunks.aclose()

    async def _list(self, prefix: str, delimiter: str | None) -> tuple[list[str], list[str]]:
        keys: list[str] = []
        prefixes: list[str] = []
        try:
            async for meta, folders in self.client.list_objects_v2(
                prefix=prefix, delimiter=delimiter
            ):
                keys.extend(m.key for m in meta)
                prefixes.extend(folders)
        except (*_FAILURES, ValueError, ElementTree.ParseError) as exc:
            raise StorageError(f"listing {prefix} failed: {exc}") from exc
        return keys, prefixes

    async def list_keys(self, prefix: str) -> list[str]:
        """Every key under a prefix."""
        return (await self._list(prefix, None))[0]

    async def list_prefixes(self, prefix: str) -> list[str]:
        """The "folders" right under a prefix (``<prefix><name>/``), one request per 1000."""
        return (await self._list(prefix, "/"))[1]

    async def delete(self, key: str) -> None:
        """Delete an object (absent is fine)."""
        await self._send(f"delete of {key}", "DELETE", key, ok=_nothing, missing=None)

    async def copy(self, src: str, dest: str) -> None:
        """Copy an object within the bucket."""
        source = quote(f"/{self.bucket}/{src}")
        await self._send(
            f"copy of {src}",
            "PUT",
            dest,
            ok=_no_error_inside(f"copy of {src}"),
            headers={"x-amz-copy-source": source},
        )

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
        url = self.client.url / key
        query: dict[str, str] = {}
        if content_type:
            query["response-content-type"] = content_type
        if disposition:
            query["response-content-disposition"] = disposition
        if query:
            url = url.with_query(query)
        return str(
            self.client.presign_url("GET", url, content_sha256=_EMPTY_SHA256, expires=expires_s)
        )

    async def open(
        self, key: str, byte_range: tuple[int, int] | None = None
    ) -> tuple[AsyncGenerator[bytes, None], int]:
        """An object's bytes (only ``first`` to ``last``, both included, with a
        ``byte_range``) as a stream of chunks, and their length; raises StorageError (before
        any byte is read) when it cannot be had."""
        what = f"download of {key}"
        headers = {} if byte_range is None else {"Range": f"bytes={byte_range[0]}-{byte_range[1]}"}
        try:
            resp = await self.client.request(
                "GET", key, headers=headers, content_sha256=_EMPTY_SHA256
            )
        except _FAILURES as exc:
            raise StorageError(f"{what} failed: {exc}") from exc
        if resp.status >= 300:
            error = await _error(what, resp)
            resp.release()
            raise error

        async def chunks() -> AsyncGenerator[bytes, None]:
            try:
                async for chunk in resp.content.iter_chunked(_CHUNK):
                    yield chunk
            finally:
                resp.close()

        return chunks(), int(resp.headers.get("Content-Length", 0))


async def _nothing(resp: aiohttp.ClientResponse) -> None:
    await resp.read()


async def _true(resp: aiohttp.ClientResponse) -> bool:
    await resp.read()
    return True


async def _body(resp: aiohttp.ClientResponse) -> bytes:
    return await resp.read()


async def _etag(resp: aiohttp.ClientResponse) -> str:
    await resp.read()
    return resp.headers["ETag"]


async def _upload_id(resp: aiohttp.ClientResponse) -> str:
    return parse_create_multipart_upload_id(await resp.read())


def _no_error_inside(what: str) -> Callable[[aiohttp.ClientResponse], Awaitable[None]]:
    """S3 may answer a copy or a completed upload 200 with an <Error> inside: raise it."""

    async def check(resp: aiohttp.ClientResponse) -> None:
        body = await resp.read()
        if b"<Error>" in body[:512]:
            root = ElementTree.fromstring(body)
            code, message = root.findtext("Code") or "", root.findtext("Message") or ""
            raise S3Answer(what, resp.status, code, message)

    return check


async def _uploads(resp: aiohttp.ClientResponse) -> list[tuple[str, str]]:
    return uploads_listed(await resp.read())


def uploads_listed(body: bytes) -> list[tuple[str, str]]:
    """(key, upload id) of each upload in a ListMultipartUploads answer."""
    root = ElementTree.fromstring(body)
    found = []
    for upload in (*root.iter(f"{_NS}Upload"), *root.iter("Upload")):
        key = upload.findtext(f"{_NS}Key") or upload.findtext("Key")
        upload_id = upload.findtext(f"{_NS}UploadId") or upload.findtext("UploadId")
        if key and upload_id:
            found.append((key, upload_id))
    return found


async def _meta(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    headers = resp.headers
    modified: datetime | None = None
    with contextlib.suppress(TypeError, ValueError):
        modified = parsedate_to_datetime(headers.get("Last-Modified", ""))
    return {
        "ContentLength": int(headers.get("Content-Length", 0)),
        "ContentType": headers.get("Content-Type"),
        "ETag": headers.get("ETag"),
        "LastModified": modified,
    }
