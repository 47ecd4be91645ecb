"""A local RFC 3161 timestamp authority for tests and benches: `openssl ts -reply` with a
test CA, behind a small HTTP handler on 127.0.0.1 (free port, its own thread).

`mode` makes it misbehave: "ok" grants, "error" answers 500, "hang" holds the request
without an answer (until the mode changes or the server stops), "garbage" answers 200 with
bytes that are no timestamp reply, "refuse" answers a PKIStatus rejection. `ber` sends each
reply in a BER form `openssl ts -verify` reads (indefinite lengths, OCTET STRINGs in
segments; the certificates and the signed attributes as they are: signatures cover their
bytes).

Its chain (`make_ca`): "none", the root signs the TSA certificate; "reply", a root, an
intermediate and the TSA certificate, the `certs` file naming the TSA's then the
intermediate's so that the reply's certificate SET is out of DER order (as FreeTSA's
`openssl ts -reply` sends it); "ca_file", the same chain but no `certs` file, so the reply
holds the TSA certificate alone and the intermediate is only in TSA_CA_FILE (`trust_pem`).
`ess` picks the signing-certificate attribute: "sha256" ESSCertIDv2, "sha1" ESSCertID (v1).
"""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared.evidence import der
from testkit.httpserver import serving_thread

CONFIG = """
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
{certs}
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = {ess}
"""
REJECTION = (
    bytes.fromhex("3020 301e 020102 3015 0c13") + b"unsupported request" + bytes.fromhex("03020520")
)
"""A TimeStampResp that grants nothing: status rejection, its words, failInfo badRequest."""


Chain = Literal["none", "reply", "ca_file"]


def as_ber(value: der.Tlv, keep: frozenset[int] = frozenset()) -> bytes:
    """One BER form of `value`: indefinite lengths, OCTET STRINGs cut in 7-byte segments;
    the values whose id() is in `keep` in DER."""
    if id(value) in keep:
        return der.encode(value)
    if value.parts is not None:
        inner = b"".join(as_ber(p, keep) for p in value.parts)
        return value.ident + b"\x80" + inner + b"\x00\x00"
    if value.ident == b"\x04" and len(value.content) > 7:
        cuts = [value.content[i : i + 7] for i in range(0, len(value.content), 7)]
        return b"\x24\x80" + b"".join(b"\x04" + bytes([len(c)]) + c for c in cuts) + b"\x00\x00"
    return der.encode(value)


def ber_reply(reply: bytes) -> bytes:
    """A TimeStampResp (DER) in BER (`as_ber`), its certificates and signed attributes left
    as they are (OpenSSL checks a signature over the attributes' encoding as received)."""
    root = der.parse(reply)
    parts = (der.signed_data(root) or der.Tlv(b"")).parts or []
    keep = [c for p in parts if p.ident == b"\xa0" for c in p.parts or ()]
    for info in parts[-1].parts or () if parts else ():  # signerInfos
        keep += [a for a in info.parts or () if a.ident == b"\xa0"]
    return as_ber(root, frozenset(map(id, keep)))


@dataclass(frozen=True)
class TestCA:
    """A root, an intermediate (or none) and a time-stamping certificate, as files."""

    root_pem: Path
    tsa_pem: Path
    tsa_key: Path
    trust_pem: Path
    """What TSA_CA_FILE holds: the root, and the intermediate when no reply carries it."""
    intermediate_pem: Path | None = None


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def _cert(
    subject: str, issuer: x509.Certificate | None, key: ec.EllipticCurvePrivateKey,
    signer: ec.EllipticCurvePrivateKey, *, ca: bool,
) -> x509.Certificate:  # fmt: skip
    now = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer.subject if issuer else _name(subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
    else:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
        )
    return builder.sign(signer, hashes.SHA256())


def make_ca(
    folder: Path, name: str = "Test TSA", *, chain: Chain = "none", ess: str = "sha256"
) -> TestCA:
    """A root CA, an intermediate when `chain` is not "none", a TSA certificate (critical EKU
    timeStamping) and the `openssl ts` config under `folder` (see the module's words)."""
    folder.mkdir(parents=True, exist_ok=True)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = _cert(f"{name} Root", None, root_key, root_key, ca=True)
    issuer, issuer_key, middle = root, root_key, None
    if chain != "none":
        middle_key = ec.generate_private_key(ec.SECP256R1())
        middle = _cert(f"{name} Intermediate", root, middle_key, root_key, ca=True)
        issuer, issuer_key = middle, middle_key
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    tsa = _cert(name, issuer, tsa_key, issuer_key, ca=False)
    # out of DER order: the TSA's certificate (first in the reply) must sort after the other
    while middle is not None and _der(tsa) < _der(middle):
        tsa = _cert(name, issuer, tsa_key, issuer_key, ca=False)
    ca = TestCA(
        folder / "root.pem", folder / "tsa.pem", folder / "tsa.key", folder / "trust.pem",
        folder / "intermediate.pem" if middle else None,
    )  # fmt: skip
    ca.root_pem.write_bytes(_pem(root))
    ca.tsa_pem.write_bytes(_pem(tsa))
    ca.tsa_key.write_bytes(
        tsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    certs = f"certs = {folder}/chain.pem"
    (folder / "chain.pem").write_bytes(_pem(tsa))
    ca.trust_pem.write_bytes(_pem(root))
    if middle is not None and ca.intermediate_pem is not None:
        ca.intermediate_pem.write_bytes(_pem(middle))
        if chain == "reply":
            (folder / "chain.pem").write_bytes(_pem(tsa) + _pem(middle))
        else:
            certs = ""
            ca.trust_pem.write_bytes(_pem(root) + _pem(middle))
    (folder / "serial").write_text("01\n")
    (folder / "openssl.cnf").write_text(CONFIG.format(dir=folder, certs=certs, ess=ess))
    return ca


class LocalTSA:
    """`openssl ts -reply` over HTTP on 127.0.0.1; `with LocalTSA() as tsa: tsa.url`."""

    def __init__(
        self, folder: Path | None = None, name: str = "Test TSA", *, chain: Chain = "none",
        ess: str = "sha256", ber: bool = False,
    ) -> None:  # fmt: skip
        self._tmp = None if folder else tempfile.TemporaryDirectory(prefix="tsa-")
        self.folder = folder or Path(self._tmp.name)  # type: ignore[union-attr]
        self.ca = make_ca(self.folder, name, chain=chain, ess=ess)
        self.ber = ber
        self.replies: list[bytes] = []
        """Every reply it granted, as sent."""
        self.mode = "ok"
        self.granted = 0
        self.asked = 0
        self._changed = threading.Condition()
        self._lock = threading.Lock()
        tsa = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                query = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with tsa._changed:
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
                elif mode == "refuse":
                    self._answer(200, REJECTION, "application/timestamp-reply")
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
        """ok, error, hang, garbage or refuse (a hanging request is let go when the mode
        changes)."""
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
            self.replies.append(ber_reply(r.read_bytes()) if self.ber else r.read_bytes())
            return self.replies[-1]

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
