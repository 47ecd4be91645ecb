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
        up = await store.client.create_multipart_upload(Bucket=store.bucket, Key="dead/1/v.mp4")
        await store.client.upload_part(
            Bucket=store.bucket, Key="dead/1/v.mp4", UploadId=up["UploadId"], PartNumber=1,
            Body=b"x" * 1000,
        )  # fmt: skip
        assert await store.abort_incomplete_uploads("dead/1/") == 1
        assert await store.abort_incomplete_uploads("dead/1/") == 0
        assert await store.head("dead/1/v.mp4") is None
