"""Tokens from any authority `openssl ts -verify` accepts: OpenSSL's own `openssl ts -reply`
with a chain in its `certs` file (the certificate SET out of DER order), the chain only in
TSA_CA_FILE, ESSCertID v1 and v2, BER; real authorities' replies (rfc3161-client's test
fixtures); and which failures are final (refused, invalid) and which are asked again."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from rfc3161_client import decode_timestamp_response

from services.supervisor.cli.app import main as dla
from shared.evidence import der, tsa
from shared.evidence.manifest import (
    Manifest,
    ManifestArtifact,
    Software,
    fingerprint,
    token_folder,
)
from testkit.tsa import Chain, LocalTSA

DER = Encoding.DER
FIXTURES = Path(__file__).parent / "fixtures" / "rfc3161-client"


async def granted(authority: LocalTSA, message: bytes, trust: Path) -> tsa.Token:
    async with httpx.AsyncClient() as client:
        return await tsa.timestamp(client, authority.url, message, tsa.trusted_roots(trust), 10)


def openssl_verify(reply: Path, data: Path, ca_file: Path) -> subprocess.CompletedProcess[str]:
    cmd = ["openssl", "ts", "-verify", "-in", str(reply), "-data", str(data)]
    return subprocess.run(
        [*cmd, "-CAfile", str(ca_file)], capture_output=True, text=True, timeout=60
    )


def manifest_beside(folder: Path) -> tuple[Path, bytes]:
    """A manifest.json listing one file, the file beside it as the bucket lays it out."""
    text = folder / "readable" / "text.txt"
    text.parent.mkdir(parents=True)
    text.write_bytes(b"hello")
    manifest = Manifest(
        link_id=1, snapshot_id="snap", attempt=1, url="http://127.0.0.2/",
        finished_at=datetime(2026, 1, 1, tzinfo=UTC),
        software=Software(version="0.1.0", service="archiver", worker="w:1"),
        artifacts=[ManifestArtifact(
            key="archives/1/snap/readable/text.txt", plugin="readable", path="text.txt",
            kind="text", content_type="text/plain", bytes=5,
            sha256=hashlib.sha256(b"hello").hexdigest(),
        )],
    )  # fmt: skip
    path = folder / "manifest.json"
    path.write_bytes(manifest.to_bytes())
    return path, manifest.to_bytes()


@pytest.mark.parametrize(
    ("chain", "ess"), [("reply", "sha256"), ("reply", "sha1"), ("ca_file", "sha256"),
                       ("ca_file", "sha1")],
)  # fmt: skip
async def test_openssl_authority_with_its_chain(
    tmp_path: Path, chain: Chain, ess: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`openssl ts -reply` with a root -> intermediate -> signer chain: in its `certs` file
    (the signer's certificate, then the intermediate: out of DER order in the reply) or only
    in TSA_CA_FILE; ESSCertIDv2 or v1. Granted, stored as sent, and checked by
    `openssl ts -verify` and `dla verify` from the stored bytes."""
    manifest, data = manifest_beside(tmp_path / "capture")
    with LocalTSA(tmp_path / "tsa", chain=chain, ess=ess) as authority:
        token = await granted(authority, data, authority.ca.trust_pem)
    (sent,) = authority.replies
    assert token.response_der == sent  # the authority's bytes, not the checked copy
    if chain == "reply":  # the case the strict parser refuses, and why
        with pytest.raises(ValueError, match="InvalidSetOrdering"):
            decode_timestamp_response(sent)
        assert der.timestamp_reply(sent) != sent
    assert token.chain_pem.count("BEGIN CERTIFICATE") == 3  # signer, intermediate, root
    reply = der.parse(der.timestamp_reply(sent))  # ESSCertID v1 (sha1) or v2 binds the signer
    assert tsa.ess_cert_id(reply) == (
        ess, hashlib.new(ess, pem_or_der(authority.ca.tsa_pem)[0].public_bytes(DER)).digest()
    )  # fmt: skip
    with pytest.raises(tsa.TimestampInvalid, match="names another certificate"):
        tsa.check_ess(reply, pem_or_der(authority.ca.root_pem)[0])

    stored = manifest.parent / token_folder(fingerprint(data)) / "tsa.tsr"
    stored.parent.mkdir(parents=True)
    stored.write_bytes(token.response_der)
    done = openssl_verify(stored, manifest, authority.ca.trust_pem)
    assert done.returncode == 0 and "Verification: OK" in done.stdout, done.stdout + done.stderr

    monkeypatch.setenv("TSA_CA_FILE", str(authority.ca.trust_pem))
    monkeypatch.setenv("WEB_URL", "http://127.0.0.1:9")  # no archive is asked
    assert dla(["verify", str(manifest)]) == 0
    out = capsys.readouterr().out
    assert "timestamp tsa.tsr" in out and "verified" in out, out
    stored.write_bytes(sent[:-1] + bytes([sent[-1] ^ 1]))  # one bit of the signature
    assert dla(["verify", str(manifest)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


async def test_a_ber_reply_is_granted_and_kept_as_ber(tmp_path: Path) -> None:
    message = tmp_path / "message"
    message.write_bytes(b"the manifest")
    with LocalTSA(tmp_path / "tsa", chain="reply", ber=True) as authority:
        token = await granted(authority, message.read_bytes(), authority.ca.trust_pem)
    (sent,) = authority.replies
    assert b"\x30\x80" in sent[:4] and token.response_der == sent
    reply = tmp_path / "reply.tsr"
    reply.write_bytes(sent)
    assert openssl_verify(reply, message, authority.ca.trust_pem).returncode == 0


async def test_the_chain_only_in_tsa_ca_file_must_be_there(tmp_path: Path) -> None:
    with (
        LocalTSA(tmp_path / "tsa", chain="ca_file") as authority,
        pytest.raises(tsa.TimestampInvalid, match="does not chain to a trusted root"),
    ):
        await granted(authority, b"m", authority.ca.root_pem)  # the intermediate missing


async def test_final_failures_and_those_asked_again(tmp_path: Path) -> None:
    with LocalTSA(tmp_path / "tsa") as authority, LocalTSA(tmp_path / "other") as other:
        authority.set_mode("refuse")
        with pytest.raises(tsa.TimestampRefused) as refused:
            await granted(authority, b"m", authority.ca.trust_pem)
        assert refused.value.final == "refused"
        assert str(refused.value) == "refused by the authority: rejection; unsupported request;" \
            " bad request"  # fmt: skip
        for mode, words in (("error", "HTTP 500"), ("garbage", "not a timestamp reply")):
            authority.set_mode(mode)
            with pytest.raises(tsa.TimestampError, match=words) as passing:
                await granted(authority, b"m", authority.ca.trust_pem)
            assert passing.value.final is None
        authority.set_mode("ok")
        with pytest.raises(tsa.TimestampInvalid, match="does not chain to a trusted root"):
            await granted(authority, b"m", other.ca.trust_pem)
        token = await granted(authority, b"m", authority.ca.trust_pem)
        with pytest.raises(tsa.TimestampInvalid, match="Mismatch") as invalid:
            tsa.check(
                authority.url, token.response_der, b"another", pem_or_der(authority.ca.trust_pem)
            )
        assert invalid.value.final == "invalid"
    for reply, words in (("300a 3008 020102 0303010002", "rejection; time source not"),
                         ("3005 3003 020103", "not granted: waiting")):  # fmt: skip
        with pytest.raises(tsa.TimestampError, match=words) as later:
            tsa.check("https://example.test/", bytes.fromhex(reply), b"m", [])
        assert later.value.final is None  # the authority's passing trouble: asked again
    with pytest.raises(tsa.TimestampInvalid, match="cannot be read: Missing SignedData"):
        tsa.check("https://example.test/", bytes.fromhex("30053003020100"), b"m", [])  # granted


def pem_or_der(path: Path) -> list[x509.Certificate]:
    data = path.read_bytes()
    if b"BEGIN CERTIFICATE" in data:
        return x509.load_pem_x509_certificates(data)
    return [x509.load_der_x509_certificate(data)]


@pytest.mark.parametrize(
    ("reply", "trust", "serial"),
    [
        ("identrust/issue-104.tsr", "all", 0x400195846778D8EBD3E0D31354082A24),
        ("sigstage/response-sha256.tsr", "root", None),
        ("sigstage/response-sha512.tsr", "root", None),
        ("sigstage/response-no-embedded-cert.tsr", "all", None),  # the signer only in the CA file
    ],
)
def test_real_authorities_replies(reply: str, trust: str, serial: int | None) -> None:
    """Replies of IdenTrust's and Sigstore's staging authorities over b"hello", with the roots
    shipped beside them (rfc3161-client's test fixtures, README there)."""
    folder = FIXTURES / reply.split("/")[0]
    certs = pem_or_der(folder / "ts_chain.pem")
    roots = certs if trust == "all" else certs[-1:]
    raw = (FIXTURES / reply).read_bytes()
    token = tsa.check("https://example.test/", raw, b"hello", roots)
    assert token.response_der == raw and token.chain_pem.count("BEGIN CERTIFICATE") >= 2
    if serial is not None:
        assert token.serial == serial
    with pytest.raises(tsa.TimestampInvalid, match="Mismatch"):
        tsa.check("https://example.test/", raw, b"hello!", roots)


def test_a_real_reply_with_a_broken_signature_is_invalid() -> None:
    roots = pem_or_der(FIXTURES / "sigstage" / "ts_chain.pem")
    raw = (FIXTURES / "sigstage" / "response-invalid-signature.tsr").read_bytes()
    with pytest.raises(tsa.TimestampInvalid, match="does not verify"):
        tsa.check("https://example.test/", raw, b"hello", roots)
    leaf_missing = (FIXTURES / "sigstage" / "response-no-embedded-cert.tsr").read_bytes()
    with pytest.raises(tsa.TimestampInvalid, match="neither in the reply nor in TSA_CA_FILE"):
        tsa.check("https://example.test/", leaf_missing, b"hello", roots[-1:])
