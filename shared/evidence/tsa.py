"""RFC 3161 trusted timestamps: asking an authority for a token over the manifest, and
checking a token against its authority's chain (rfc3161-client, Trail of Bits; certificates
with `cryptography`).

A token is kept as the authority's whole TimeStampResp exactly as received (what
`openssl ts -verify -in` reads) with the chain from its signing certificate to the trusted
root (PEM), so anyone can check it without asking the authority again. Roots trusted: the
system's bundle plus `TSA_CA_FILE`. A reply is checked on a DER copy (`shared.evidence.der`):
authorities send BER or certificate SETs out of DER order (OpenSSL's own `openssl ts -reply`
does), which the strict parser refuses but `openssl ts -verify` takes. The signer's
certificate (and the certificates between it and a root) may come in the reply or in
TSA_CA_FILE only; its signed ESSCertID (v1 or v2) must name it, as OpenSSL checks.

A failure is one of three kinds: `TimestampError` (down, slow, an answer that is no reply:
asked again later), `TimestampRefused` (the authority said no) and `TimestampInvalid` (a
token that does not verify); the last two are final (not asked again), their words say why.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

import httpx
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from rfc3161_client import (
    HashAlgorithm,
    TimestampRequestBuilder,
    TimeStampResponse,
    VerificationError,
    VerifierBuilder,
    decode_timestamp_response,
)

from shared.evidence import der
from shared.messages import TimestampFinal

QUERY_TYPE = "application/timestamp-query"
REPLY_TYPE = "application/timestamp-reply"
CHAIN_TYPE = "application/pem-certificate-chain"
SYSTEM_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


class TimestampError(Exception):
    """An authority gave no usable token this time (down, slow, an answer that is no
    timestamp reply): it is asked again later."""

    final: ClassVar[TimestampFinal | None] = None


class TimestampRefused(TimestampError):
    """The authority answered and refused (PKIStatus rejection): not asked again."""

    final = "refused"


class TimestampInvalid(TimestampError):
    """The authority granted a token that does not verify: not asked again."""

    final = "invalid"


STATUS_WORDS = {
    2: "rejection", 3: "waiting", 4: "revocation warning", 5: "revocation notification"
}  # fmt: skip
FAILURE_WORDS = {
    0: "unrecognized or unsupported algorithm", 2: "bad request", 5: "bad data format",
    14: "time source not available", 15: "policy not supported",
    16: "extension not supported", 17: "additional information not available",
    25: "system failure",
}  # fmt: skip
"""PKIFailureInfo bits (RFC 3161 2.4.2) in words."""
PASSING_FAILURES = frozenset({14, 25})
"""Failures the authority may get over (its clock, its system): asked again."""
ESS_V1 = bytes.fromhex("2a864886f70d010910020c")
"""id-aa-signingCertificate (1.2.840.113549.1.9.16.2.12): ESSCertID, SHA-1."""
ESS_V2 = bytes.fromhex("2a864886f70d010910022f")
"""id-aa-signingCertificateV2 (1.2.840.113549.1.9.16.2.47): ESSCertIDv2."""
ESS_HASHES = {
    bytes.fromhex("2b0e03021a"): "sha1",
    bytes.fromhex("608648016503040201"): "sha256",
    bytes.fromhex("608648016503040202"): "sha384",
    bytes.fromhex("608648016503040203"): "sha512",
}
"""ESSCertIDv2 hash algorithms by their OID's content octets."""


@dataclass(frozen=True)
class Token:
    """A granted, checked token."""

    authority: str
    response_der: bytes
    chain_pem: str
    time: datetime
    serial: int


def trusted_roots(ca_file: Path | None) -> list[x509.Certificate]:
    """The system's roots plus those of `ca_file` (TSA_CA_FILE)."""
    roots: list[x509.Certificate] = []
    cafile = ssl.get_default_verify_paths().cafile
    candidates = [cafile] if cafile else []
    candidates += [b for b in SYSTEM_BUNDLES if b not in candidates]
    for bundle in candidates:
        if bundle and Path(bundle).is_file():
            with warnings.catch_warnings():  # a few old system roots have odd serial numbers
                warnings.simplefilter("ignore")
                roots += x509.load_pem_x509_certificates(Path(bundle).read_bytes())
            break
    if ca_file is not None:
        roots += x509.load_pem_x509_certificates(ca_file.read_bytes())
    return roots


def request_bytes(message: bytes) -> bytes:
    """A TimeStampReq over sha256(message), asking for the signer's certificate."""
    req = (
        TimestampRequestBuilder()
        .data(message)
        .hash_algorithm(HashAlgorithm.SHA256)
        .cert_request(cert_request=True)
        .nonce(nonce=True)
        .build()
    )
    return req.as_bytes()


async def ask(client: httpx.AsyncClient, authority: str, message: bytes, timeout: float) -> bytes:
    """POST a request over `message` to the authority; its answer's bytes (TimestampError
    when it is down, slow, or answers anything but a timestamp reply)."""
    try:
        async with asyncio.timeout(timeout):  # httpx's timeouts are per read; this is the total
            resp = await client.post(
                authority,
                content=request_bytes(message),
                headers={"Content-Type": QUERY_TYPE, "Accept": REPLY_TYPE},
                timeout=timeout,
            )
    except TimeoutError as exc:
        raise TimestampError(f"no answer within {timeout:g} s") from exc
    except httpx.HTTPError as exc:
        raise TimestampError(f"{type(exc).__name__}: {str(exc)[:200]}".rstrip(": ")) from exc
    if resp.status_code != 200:
        raise TimestampError(f"HTTP {resp.status_code}")
    return resp.content


def check(
    authority: str, response_der: bytes, message: bytes, roots: list[x509.Certificate]
) -> Token:
    """The token in `response_der` (the reply as received), checked: granted, over
    sha256(message), signed by a time-stamping certificate that chains to one of `roots`
    (TimestampError otherwise, TimestampRefused or TimestampInvalid when final)."""
    try:
        copy = der.timestamp_reply(response_der)
    except der.BerError as exc:
        raise TimestampError(f"not a timestamp reply: {exc}") from exc
    reply = der.parse(copy)
    refusal(reply)
    try:
        resp = decode_timestamp_response(copy)
        certs = [x509.load_der_x509_certificate(c) for c in resp.signed_data.certificates]
        leaf = signer_of(resp, certs)
    except (ValueError, StopIteration) as exc:  # StopIteration: no SignerInfo
        raise TimestampInvalid(f"the token cannot be read: {str(exc)[:200]}") from exc
    if not roots:
        raise TimestampInvalid("no trusted roots")
    builder = VerifierBuilder(roots=list(roots))
    if leaf is None:  # the reply leaves it out: TSA_CA_FILE may have it
        leaf = signer_of(resp, roots)
        if leaf is None:
            raise TimestampInvalid(
                "the signer's certificate is neither in the reply nor in TSA_CA_FILE"
            )
        builder = builder.tsa_certificate(leaf)
    check_ess(reply, leaf)
    try:
        builder.build().verify_message(resp, message)
    except (VerificationError, ValueError) as exc:
        if "certificate verify error" in str(exc):  # OpenSSL's words for a chain it cannot trust
            raise TimestampInvalid(
                "token does not verify: its authority's certificate does not chain to a trusted"
                " root (the system's, or TSA_CA_FILE's)"
            ) from exc
        raise TimestampInvalid(f"token does not verify: {str(exc)[:200]}") from exc
    gen = resp.tst_info.gen_time
    gen = gen if gen.tzinfo else gen.replace(tzinfo=UTC)
    return Token(
        authority, response_der, chain_pem(resp, certs + roots), gen, resp.tst_info.serial_number
    )


def refusal(reply: der.Tlv) -> None:
    """Raise when the reply's PKIStatusInfo grants nothing (status 0 granted and 1 granted
    with modifications pass), in the authority's words."""
    info = (reply.parts or [der.Tlv(b"")])[0]
    if not info.parts or info.parts[0].ident != b"\x02":
        raise TimestampError("not a timestamp reply: no PKIStatusInfo")
    status = int.from_bytes(info.parts[0].content, "big", signed=True)
    if status in (0, 1):
        return
    words = [STATUS_WORDS.get(status, f"status {status}")]
    bits: set[int] = set()
    for part in info.parts[1:]:
        if part.ident == b"\x30":  # statusString: PKIFreeText, UTF8Strings
            words += [p.content.decode("utf-8", "replace") for p in part.parts or ()]
        elif part.ident == b"\x03" and part.content:  # failInfo: a BIT STRING, bit 0 first
            flags = int.from_bytes(part.content[1:], "big")
            width = 8 * (len(part.content) - 1)
            bits = {b for b in range(width) if flags >> (width - 1 - b) & 1}
            words += [FAILURE_WORDS.get(b, f"failure bit {b}") for b in sorted(bits)]
    said = "; ".join(w for w in words if w)[:300]
    if status == 3 or (bits and bits <= PASSING_FAILURES):
        raise TimestampError(f"not granted: {said}")
    raise TimestampRefused(f"refused by the authority: {said}")


def check_ess(reply: der.Tlv, signer: x509.Certificate) -> None:
    """The token's signed attributes name `signer`: the first ESSCertID (v1 or v2) of its
    signing-certificate attribute holds its hash, as `openssl ts -verify` checks
    (TimestampInvalid otherwise)."""
    try:
        named = ess_cert_id(reply)
    except (IndexError, ValueError) as exc:
        raise TimestampInvalid(f"its signing-certificate attribute cannot be read: {exc}") from exc
    if named is None:
        raise TimestampInvalid("it names no signing certificate (no ESS attribute)")
    algorithm, digest = named
    if hashlib.new(algorithm, signer.public_bytes(Encoding.DER)).digest() != digest:
        raise TimestampInvalid(
            "its signing-certificate attribute (ESS) names another certificate than its signer's"
        )


def ess_cert_id(reply: der.Tlv) -> tuple[str, bytes] | None:
    """(hash name, certificate hash) of the first ESSCertID of the signer's signed
    attributes, None without a signing-certificate attribute (IndexError, ValueError when
    the structure is not what RFC 5035 says)."""
    signed = der.signed_data(reply)
    infos = _parts(_parts(signed)[-1]) if signed else []  # signerInfos: SET OF SignerInfo
    attrs = next((a for a in _parts(infos[0]) if a.ident == b"\xa0"), None) if infos else None
    for attr in _parts(attrs) if attrs else ():
        oid, values = _parts(attr)[:2]
        if oid.content not in (ESS_V1, ESS_V2):
            continue
        signing_certificate = _parts(values)[0]
        fields = _parts(_parts(_parts(signing_certificate)[0])[0])  # certs -> the first ESSCertID
        algorithm = "sha1" if oid.content == ESS_V1 else "sha256"
        if oid.content == ESS_V2 and fields[0].ident == b"\x30":  # hashAlgorithm, not default
            algorithm = ESS_HASHES.get(_parts(fields[0])[0].content, "")
            fields = fields[1:]
        if not algorithm:
            raise ValueError("an unknown hash algorithm")
        return algorithm, fields[0].content
    return None


def _parts(value: der.Tlv | None) -> list[der.Tlv]:
    if value is None or value.parts is None:
        raise ValueError("a primitive value where a constructed one belongs")
    return value.parts


def signer_of(resp: TimeStampResponse, certs: list[x509.Certificate]) -> x509.Certificate | None:
    """The certificate of `certs` that signed the token (by its issuer and serial number)."""
    signer = next(iter(resp.signed_data.signer_infos))
    return next(
        (c for c in certs if c.issuer == signer.issuer and c.serial_number == signer.serial_number),
        None,
    )


def chain_pem(resp: TimeStampResponse, pool: list[x509.Certificate]) -> str:
    """The certificates from the token's signer up to its root, as PEM (found in `pool`: the
    reply's certificates and the trusted roots)."""
    leaf = signer_of(resp, pool)
    if leaf is None:
        return ""
    chain = [leaf]
    while chain[-1].issuer != chain[-1].subject and len(chain) < 8:
        parent = next((c for c in pool if c.subject == chain[-1].issuer), None)
        if parent is None or parent in chain:
            break
        chain.append(parent)
    return "".join(c.public_bytes(Encoding.PEM).decode() for c in chain)


async def timestamp(
    client: httpx.AsyncClient,
    authority: str,
    message: bytes,
    roots: list[x509.Certificate],
    timeout: float,
) -> Token:
    """Ask one authority for a token over `message` and check it (TimestampError)."""
    return check(authority, await ask(client, authority, message, timeout), message, roots)
