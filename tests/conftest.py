"""Fixtures: real nats-server and SeaweedFS on 127.0.0.1 free ports, stopped by PID."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.supervisor.infra import S3Credentials, start_nats, start_weed

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"


@pytest.fixture
def corpora() -> Path:
    """../shared/corpora beside the checkout; skips the test when absent."""
    if not CORPORA.is_dir():
        pytest.skip("../shared/corpora not present")
    return CORPORA


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    """A fresh nats-server with JetStream for one test."""
    nats = start_nats(tmp_path / "nats", tmp_path / "nats.log")
    try:
        yield nats.url
    finally:
        nats.child.stop()


@pytest.fixture(scope="session")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One SeaweedFS for the session: the env a service needs to reach it."""
    data = tmp_path_factory.mktemp("s3")
    creds = S3Credentials("testkey", "test-secret-value-0123456789")
    weed = start_weed(data, "test-archive", creds, data / "weed.log")
    try:
        yield {
            "S3_ENDPOINT": weed.endpoint,
            "S3_BUCKET": "test-archive",
            "AWS_ACCESS_KEY_ID": creds.access_key,
            "AWS_SECRET_ACCESS_KEY": creds.secret_key,
        }
    finally:
        weed.child.stop()
