"""RFC 3161 trusted timestamps: asking an authority for a token over the manifest, and
checking a token against its authority's chain (rfc3161-client, Trail of Bits; certificates
with `cryptography`).

A token is kept as the authority's whole TimeStampResp (DER: what `openssl ts -verify -in`
reads) with the chain from its signing certificate to the trusted root (PEM), so anyone can
check it without asking the authority again. Roots trusted: the system's bundle plus
`TSA_CA_FILE`.
"""

from __future__ import annotations

import asyncio
import ssl
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

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

QUERY_TYPE = "application/timestamp-query"
REPLY_TYPE = "application/timestamp-reply"
CHAIN_TYPE = "application/pem-certificate-chain"
SYSTEM_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


class TimestampError(Exception):
    """An authority gave no usable token (down, refused, or an answer that does not check)."""


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
    """The token in `response_der`, checked: granted, over sha256(message), signed by a
    time-stamping certificate that chains to one of `roots` (TimestampError otherwise)."""
    try:
        resp = decode_timestamp_response(response_der)
    except ValueError as exc:
        raise TimestampError(f"not a timestamp reply: {str(exc)[:200]}") from exc
    if not roots:
        raise TimestampError("no trusted roots")
    builder = VerifierBuilder(roots=list(roots))
    try:
        builder.build().verify_message(resp, message)
    except (VerificationError, ValueError) as exc:
        if "certificate verify error" in str(exc):  # OpenSSL's words for a chain it cannot trust
            raise TimestampError(
                "token does not verify: its authority's certificate does not chain to a trusted"
                " root (the system's, or TSA_CA_FILE's)"
            ) from exc
        raise TimestampError(f"token does not verify: {str(exc)[:200]}") from exc
    gen = resp.tst_info.gen_time
    gen = gen if gen.tzinfo else gen.replace(tzinfo=UTC)
    return Token(authority, response_der, chain_pem(resp, roots), gen, resp.tst_info.serial_number)


def chain_pem(resp: TimeStampResponse, roots: list[x509.Certificate]) -> str:
    """The certificates from the token's signer up to its root, as PEM."""
    certs = [x509.load_der_x509_certificate(c) for c in resp.signed_data.certificates]
    signer = next(iter(resp.signed_data.signer_infos))
    leaf = next(
        (c for c in certs if c.issuer == signer.issuer and c.serial_number == signer.serial_number),
        None,
    )
    if leaf is None:
        return ""
    pool = certs + roots
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
