"""The interception CA: leaves the browser accepts, and no key ever written to disk."""

from __future__ import annotations

import os
import socket
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from services.archiver.egress.interception import Interceptor


def _handshake(ctx: ssl.SSLContext, ca_pem: bytes, host: str) -> str:
    """A TLS handshake over a socket pair, the client verifying host against ca_pem;
    the name the server's certificate was checked for."""
    client_ctx = ssl.create_default_context(cadata=ca_pem.decode())
    a, b = socket.socketpair()
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            with ctx.wrap_socket(b, server_side=True) as s:
                s.recv(1)
        except (OSError, ssl.SSLError) as e:
            errors.append(e)

    t = threading.Thread(target=serve)
    t.start()
    try:
        with client_ctx.wrap_socket(a, server_hostname=host) as c:
            c.sendall(b"x")
            peer = c.getpeercert()
    finally:
        t.join(5)
    assert not errors
    assert peer is not None
    subject: Any = peer["subject"]  # ((("commonName", "host"),),)
    return str(dict(pair for rdn in subject for pair in rdn)["commonName"])


def _fds() -> dict[str, str]:
    """This process's open files: fd -> what it points at."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile (the listing's own fd)
            continue
    return fds


def _opened(before: dict[str, str], tmp_path: Path) -> list[str]:
    """Memory files and files under tmp_path opened since `before`: the Interceptor's
    (sockets and pipes other tests' threads in this worker open meanwhile do not count)."""
    return sorted(
        target
        for fd, target in _fds().items()
        if before.get(fd) != target
        and (target.startswith("/memfd:") or target.startswith(str(tmp_path)))
    )


def test_a_leaf_verifies_and_nothing_is_written_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = _fds()
    tls = Interceptor()
    assert _handshake(tls.server_context("news.example"), tls.ca_pem, "news.example") == (
        "news.example"
    )
    assert _handshake(tls.server_context("127.0.0.1"), tls.ca_pem, "127.0.0.1") == "127.0.0.1"
    assert list(tmp_path.iterdir()) == []  # a killed archiver leaves no key behind
    assert len(_opened(before, tmp_path)) == 1  # the key's memory file, and no chain open
    made = tls.server_context("news.example")
    tls.close()
    tls.close()
    assert _opened(before, tmp_path) == []
    # contexts made before the close keep serving
    assert _handshake(made, tls.ca_pem, "news.example") == "news.example"


def test_a_leaf_is_refused_for_another_host() -> None:
    tls = Interceptor()
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            _handshake(tls.server_context("news.example"), tls.ca_pem, "other.example")
    finally:
        tls.close()
