"""ObjectStore.put_file on a real SeaweedFS: one PUT or a streamed multipart upload."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from shared import s3
from shared.s3 import ObjectStore
from shared.settings import CommonSettings

pytestmark = pytest.mark.integration


def settings(s3_env: dict[str, str]) -> CommonSettings:
    return CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})


async def _killed_upload(s3_env: dict[str, str], bucket: str, key: str) -> None:
    """A multipart upload begun with one part sent and never completed, by another S3 client
    (aioboto3), as a worker killed mid-upload leaves it."""
    import aioboto3
    from botocore.config import Config

    client = aioboto3.Session().client(
        "s3", endpoint_url=s3_env["S3_ENDPOINT"], region_name="us-east-1",
        aws_access_key_id=s3_env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3_env["AWS_SECRET_ACCESS_KEY"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )  # fmt: skip
    async with client as s3client:
        up = await s3client.create_multipart_upload(Bucket=bucket, Key=key)
        await s3client.upload_part(
            Bucket=bucket, Key=key, UploadId=up["UploadId"], PartNumber=1, Body=b"x" * 1000
        )


@pytest.mark.parametrize("size", [0, 1000, s3.PART_SIZE, 2 * s3.PART_SIZE + 12345])
async def test_put_file_round_trips_with_its_sha256(
    s3_env: dict[str, str], tmp_path: Path, size: int
) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    async with ObjectStore(settings(s3_env)) as store:
        await store.ensure_bucket()
        got = await store.put_file(f"t/{size}.bin", path, "video/mp4")
        assert got == (size, hashlib.sha256(data).hexdigest())
        assert await store.get_bytes(f"t/{size}.bin") == data
        head = await store.head(f"t/{size}.bin")
        assert head is not None and head["ContentType"] == "video/mp4"


async def test_incomplete_uploads_under_a_prefix_are_aborted(
    s3_env: dict[str, str], tmp_path: Path
) -> None:
    async with ObjectStore(settings(s3_env)) as store:
        await store.ensure_bucket()
        await _killed_upload(s3_env, store.bucket, "dead/1/v.mp4")
        assert [key for key, _ in await store.incomplete_uploads("dead/")] == ["dead/1/v.mp4"]
        assert await store.abort_incomplete_uploads("dead/1/") == 1
        assert await store.abort_incomplete_uploads("dead/1/") == 0
        assert await store.head("dead/1/v.mp4") is None
