"""A local RFC 3161 timestamp authority for tests and benches: `openssl ts -reply` with a
test CA, behind a small HTTP handler on 127.0.0.1 (free port, its own thread).

`mode` makes it misbehave: "ok" grants, "error" answers 500, "hang" holds the request
without an answer (until the mode changes or the server stops), "garbage" answers 200 with
bytes that are no timestamp reply.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from testkit.httpserver import serving_thread

CONFIG = """
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/chain.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


@dataclass(frozen=True)
class TestCA:
    """A root and a time-stamping certificate it signed, as files."""

    root_pem: Path
    tsa_pem: Path
    tsa_key: Path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(folder: Path, name: str = "Test TSA") -> TestCA:
    """A root CA and a TSA certificate (critical EKU timeStamping) under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{name} Root"))
        .issuer_name(_name(f"{name} Root"))
        .public_key(root_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
        .sign(root_key, hashes.SHA256())
    )
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    tsa = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(root.subject)
        .public_key(tsa_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .sign(root_key, hashes.SHA256())
    )
    ca = TestCA(folder / "root.pem", folder / "tsa.pem", folder / "tsa.key")
    ca.root_pem.write_bytes(root.public_bytes(serialization.Encoding.PEM))
    ca.tsa_pem.write_bytes(tsa.public_bytes(serialization.Encoding.PEM))
    ca.tsa_key.write_bytes(
        tsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (folder / "chain.pem").write_bytes(ca.tsa_pem.read_bytes())
    (folder / "serial").write_text("01\n")
    (folder / "openssl.cnf").write_text(CONFIG.format(dir=folder))
    return ca


class LocalTSA:
    """`openssl ts -reply` over HTTP on 127.0.0.1; `with LocalTSA() as tsa: tsa.url`."""

    def __init__(self, folder: Path | None = None, name: str = "Test TSA") -> None:
        self._tmp = None if folder else tempfile.TemporaryDirectory(prefix="tsa-")
        self.folder = folder or Path(self._tmp.name)  # type: ignore[union-attr]
        self.ca = make_ca(self.folder, name)
        self.mode = "ok"
        self.granted = 0
        self.asked = 0
        self._changed = threading.Condition()
        self._lock = threading.Lock()
        tsa = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                query = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                tsa.asked += 1
                mode = tsa.mode
                if mode == "hang":
                    with tsa._changed:
                        tsa._changed.wait_for(lambda: tsa.mode != "hang", timeout=120)
                    self.close_connection = True
                    return
                if mode == "error":
                    self._answer(500, b"down", "text/plain")
                elif mode == "garbage":
                    self._answer(200, b"\x30\x03\x02\x01\x00garbage", "application/timestamp-reply")
                else:
                    self._answer(200, tsa.reply(query), "application/timestamp-reply")

            def _answer(self, status: int, body: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/tsr"
        self.thread = serving_thread(self.httpd)

    def set_mode(self, mode: str) -> None:
        """ok, error, hang or garbage (a hanging request is let go when the mode changes)."""
        with self._changed:
            self.mode = mode
            self._changed.notify_all()

    def reply(self, query: bytes) -> bytes:
        """openssl's TimeStampResp for a TimeStampReq."""
        with self._lock, tempfile.TemporaryDirectory(dir=self.folder) as tmp:
            q, r = Path(tmp) / "q.tsq", Path(tmp) / "r.tsr"
            q.write_bytes(query)
            subprocess.run(
                ["openssl", "ts", "-reply", "-config", str(self.folder / "openssl.cnf"),
                 "-queryfile", str(q), "-out", str(r)],
                check=True, capture_output=True, timeout=30,
            )  # fmt: skip
            self.granted += 1
            return r.read_bytes()

    def __enter__(self) -> LocalTSA:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.set_mode("ok")
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
        if self._tmp is not None:
            self._tmp.cleanup()
