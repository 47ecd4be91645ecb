"""TLS interception for the egress proxy: the archiver's own certificate authority, a leaf
certificate per host the browser tunnels to, and the verifying context the proxy uses
towards the real servers.

To record what the browser sends and receives over HTTPS (the browser WARC) and to bound
each of its requests, the proxy ends the browser's TLS itself and opens its own TLS
connection to the server. The browser then sees a certificate the archiver made: each
archiver process makes a certificate authority at start (an ECDSA P-256 key and a
self-signed CA certificate, with `cryptography`, never written to disk: the PEM that
OpenSSL must read from a path lives in anonymous memory files, `memfd_create`, gone with the
process however it ends) and signs, on first use, a leaf certificate for each host (cached,
`LEAF_CACHE` hosts). Every leaf shares one key, and Chromium is launched with that key's
SPKI hash in `--ignore-certificate-errors-spki-list`, so it accepts exactly these leaves
and nothing else it would otherwise refuse; the browser only ever talks TLS to the proxy.

Towards the server the proxy verifies as a browser does, never less: the system's trust
store (plus `BROWSER_EXTRA_CA_FILE`, PEM roots to trust beside it, for private CAs and the
tests), the host name, TLS 1.2 at least. A server whose certificate does not verify is
answered with an explicit error (`X-Archiver-Error: tls`), never relayed.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import ssl
import threading
from collections import OrderedDict

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared import processes

LEAF_CACHE = 1024
"""Hosts whose server context is kept (a context costs about a millisecond to make)."""
VALIDITY = datetime.timedelta(days=30)
ALPN = ["http/1.1"]
"""What both legs speak: the proxy frames HTTP/1.1 (framing.py), so neither the browser
nor the server is offered HTTP/2."""


CA_USAGE = x509.KeyUsage(
    digital_signature=True, content_commitment=False, key_encipherment=False,
    data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
    encipher_only=False, decipher_only=False,
)  # fmt: skip


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class Interceptor:
    """One archiver's CA and its leaf contexts (thread-safe: contexts are made lazily)."""

    def __init__(self, extra_ca_file: str | None = None) -> None:
        self._ca_key = ec.generate_private_key(ec.SECP256R1())
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self._not_before = now - datetime.timedelta(days=1)
        self._ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name("DLA archiver interception CA"))
            .issuer_name(_name("DLA archiver interception CA"))
            .public_key(self._ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(CA_USAGE, critical=True)
            .sign(self._ca_key, hashes.SHA256())
        )
        self._key_fd = _memory_file(
            "dla-leaf-key",
            self._leaf_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )
        self._contexts: OrderedDict[str, ssl.SSLContext] = OrderedDict()
        self._lock = threading.Lock()
        self.upstream = upstream_context(extra_ca_file)
        """The verifying client context towards real servers."""

    @property
    def spki_hash(self) -> str:
        """base64(sha256(SubjectPublicKeyInfo)) of the leaves' key, for Chromium's
        `--ignore-certificate-errors-spki-list`."""
        spki = self._leaf_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(hashlib.sha256(spki).digest()).decode()

    @property
    def ca_pem(self) -> bytes:
        """The CA certificate (PEM), for tools that want to check a leaf."""
        return self._ca_cert.public_bytes(serialization.Encoding.PEM)

    def server_context(self, host: str) -> ssl.SSLContext:
        """The TLS server context that presents host's leaf certificate to the browser."""
        key = host.lower()
        with self._lock:
            ctx = self._contexts.get(key)
            if ctx is not None:
                self._contexts.move_to_end(key)
                return ctx
        ctx = self._make_context(key)
        with self._lock:
            self._contexts[key] = ctx
            while len(self._contexts) > LEAF_CACHE:
                self._contexts.popitem(last=False)
        return ctx

    def _make_context(self, host: str) -> ssl.SSLContext:
        try:
            san: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            san = x509.DNSName(host)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(host[:64]))
            .issuer_name(self._ca_cert.subject)
            .public_key(self._leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._not_before)
            .not_valid_after(self._ca_cert.not_valid_after_utc)
            .add_extension(x509.SubjectAlternativeName([san]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(self._ca_key, hashes.SHA256())
        )
        chain = _memory_file(
            "dla-leaf-chain",
            cert.public_bytes(serialization.Encoding.PEM)
            + self._ca_cert.public_bytes(serialization.Encoding.PEM),
        )
        try:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.load_cert_chain(processes.own_fd_path(chain), processes.own_fd_path(self._key_fd))
        finally:
            os.close(chain)
        ctx.set_alpn_protocols(ALPN)
        return ctx

    def close(self) -> None:
        """Free the key's memory file (idempotent; made contexts keep working)."""
        if self._key_fd >= 0:
            os.close(self._key_fd)
            self._key_fd = -1


def _memory_file(name: str, data: bytes) -> int:
    """An anonymous in-memory file holding data (close-on-exec, so no child inherits it)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
    except BaseException:
        os.close(fd)
        raise
    return fd


def upstream_context(extra_ca_file: str | None = None) -> ssl.SSLContext:
    """A verifying client context: the system's roots (and extra_ca_file's), host names
    checked, TLS 1.2 at least, HTTP/1.1 offered."""
    ctx = ssl.create_default_context()
    if extra_ca_file:
        ctx.load_verify_locations(cafile=extra_ca_file)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(ALPN)
    return ctx
