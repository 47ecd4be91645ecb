"""The manifest, the WACZ (checked by `wacz validate`), RFC 3161 tokens from a local
authority, and the verification that catches one changed byte, an edited manifest and the
wrong CA."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

import httpx
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from shared.evidence import tsa
from shared.evidence.manifest import Manifest, ManifestArtifact, Software
from shared.evidence.verify import Finding, VerifyVerdict, check_artifact, check_token, check_wacz
from shared.evidence.wacz import DIGEST_ENTRY, build
from testkit.tsa import LocalTSA

URL = "http://127.0.0.2/page"


def make_warc(path: Path, url: str, body: bytes) -> None:
    with path.open("wb") as f:
        w = WARCWriter(f, gzip=True)
        req = StatusAndHeaders("GET / HTTP/1.1", [("Host", "127.0.0.2")], is_http_request=True)
        w.write_record(w.create_warc_record(url, "request", http_headers=req))
        resp = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        w.write_record(
            w.create_warc_record(url, "response", payload=BytesIO(body), http_headers=resp)
        )


def entry(path: Path, plugin: str, kind: str) -> ManifestArtifact:
    data = path.read_bytes()
    return ManifestArtifact(
        key=f"archives/1/snap/{plugin}/{path.name}", plugin=plugin, path=path.name, kind=kind,
        content_type="application/warc" if kind == "warc" else "text/plain",
        bytes=len(data), sha256=hashlib.sha256(data).hexdigest(),
    )  # fmt: skip


@pytest.fixture
def capture(tmp_path: Path) -> tuple[Manifest, bytes, list[tuple[str, Path]]]:
    fetch = tmp_path / "fetch.warc.gz"
    browser = tmp_path / "browser.warc.gz"
    make_warc(fetch, URL, b"<html><title>t</title>hello</html>")
    make_warc(browser, URL + "/api.json", b'{"answer": 42}')
    text = tmp_path / "text.txt"
    text.write_text("hello")
    manifest = Manifest(
        link_id=1, snapshot_id="snap", attempt=1, url=URL, final_url=URL, title="t",
        started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
        software=Software(version="0.1.0", service="archiver", worker="w:1"),
        settings={"USER_AGENT": "test"},
        artifacts=[entry(fetch, "fetch", "warc"), entry(browser, "traffic", "warc"),
                   entry(text, "readable", "text")],
    )  # fmt: skip
    return manifest, manifest.to_bytes(), [("fetch", fetch), ("traffic", browser)]


def wacz_validate(path: Path) -> subprocess.CompletedProcess[str]:
    wacz = Path(sys.executable).parent / "wacz"
    return subprocess.run(
        [str(wacz), "validate", "-f", str(path)], capture_output=True, text=True, timeout=60
    )


def test_wacz_passes_wacz_validate_and_our_checks(tmp_path: Path, capture) -> None:
    manifest, data, warcs = capture
    out = tmp_path / "capture.wacz"
    build(out, manifest, data, warcs)
    done = wacz_validate(out)
    assert done.returncode == 0 and "is valid" in done.stdout, done.stdout + done.stderr
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
        assert {"archive/fetch.warc.gz", "archive/browser.warc.gz", "pages/pages.jsonl",
                "indexes/index.cdx.gz", "evidence/manifest.json"} <= names  # fmt: skip
        assert z.getinfo("archive/fetch.warc.gz").compress_type == zipfile.ZIP_STORED
        pages = z.read("pages/pages.jsonl").decode().splitlines()
        assert URL in pages[1]
    verdict = VerifyVerdict()
    got, got_bytes = check_wacz(verdict, out, roots=[])
    assert verdict.ok, verdict.summary()
    assert got == manifest and got_bytes == data


def flip_byte_of(wacz: Path, member: str, at: int) -> None:
    """Change one byte of a stored member in place (the zip stays readable)."""
    with zipfile.ZipFile(wacz) as z:
        info = z.getinfo(member)
    with wacz.open("r+b") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = (
            int.from_bytes(f.read(2), "little"),
            int.from_bytes(f.read(2), "little"),
        )
        pos = info.header_offset + 30 + name_len + extra_len + at
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x01]))


def test_one_changed_byte_is_caught(tmp_path: Path, capture) -> None:
    manifest, data, warcs = capture
    out = tmp_path / "capture.wacz"
    build(out, manifest, data, warcs)
    flip_byte_of(out, "archive/fetch.warc.gz", 40)
    verdict = VerifyVerdict()
    check_wacz(verdict, out, roots=[])
    assert not verdict.ok
    bad = {f.what for f in verdict.findings if not f.ok}
    assert "capture.wacz:archive/fetch.warc.gz" in bad
    # the manifest's hash matches no WARC in the WACZ any more
    assert "capture.wacz:archives/1/snap/fetch/fetch.warc.gz" in bad
    changed = bytearray(warcs[0][1].read_bytes())
    changed[40] ^= 0x01
    single = VerifyVerdict()
    assert not check_artifact(single, manifest.artifacts[0], [bytes(changed)])
    assert check_artifact(single, manifest.artifacts[0], [warcs[0][1].read_bytes()])


async def test_tokens_granted_verified_and_rejected(tmp_path: Path, capture) -> None:
    manifest, data, warcs = capture
    with LocalTSA(tmp_path / "tsa") as authority, LocalTSA(tmp_path / "other") as other:
        roots = tsa.trusted_roots(authority.ca.root_pem)
        async with httpx.AsyncClient() as client:
            token = await tsa.timestamp(client, authority.url, data, roots, 10)
        assert token.chain_pem.count("BEGIN CERTIFICATE") == 2
        assert abs((token.time - datetime.now(UTC)).total_seconds()) < 60

        ok = VerifyVerdict()
        check_token(ok, authority.url, token.response_der, data, roots)
        assert ok.ok, ok.summary()

        edited = data.replace(b'"attempt": 1', b'"attempt": 2')
        assert edited != data
        bad = VerifyVerdict()
        check_token(bad, authority.url, token.response_der, edited, roots)
        assert not bad.ok and "Mismatch" in bad.summary()

        wrong = VerifyVerdict()
        check_token(wrong, authority.url, token.response_der, data,
                    tsa.trusted_roots(other.ca.root_pem))  # fmt: skip
        assert not wrong.ok and "does not chain to a trusted root" in wrong.summary()

        # a WACZ of an earlier version carries the token in datapackage-digest.json: checked
        plain = tmp_path / "plain.wacz"
        build(plain, manifest, data, warcs)
        stamped = tmp_path / "stamped.wacz"
        stamped_like_before(plain, stamped, authority.url, token)
        assert wacz_validate(stamped).returncode == 0
        v = VerifyVerdict()
        check_wacz(v, stamped, roots)
        assert v.ok, v.summary()
        assert any("timestamp" in f.what and f.ok for f in v.findings)

        # the manifest inside edited: its fingerprint no longer matches the token
        forged = tmp_path / "forged.wacz"
        with zipfile.ZipFile(stamped) as src, zipfile.ZipFile(forged, "w") as dst:
            for info in src.infolist():
                body = src.read(info)
                if info.filename == "evidence/manifest.json":
                    body = body.replace(b'"attempt": 1', b'"attempt": 2')
                dst.writestr(info, body)
        f = VerifyVerdict()
        check_wacz(f, forged, roots)
        assert not f.ok


def stamped_like_before(src: Path, out: Path, authority: str, token: tsa.Token) -> None:
    """`src` with `token` in its datapackage-digest.json, as WACZs made before tokens were
    files of their own carried it."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(out, "w") as new:
        for info in old.infolist():
            body = old.read(info)
            if info.filename == DIGEST_ENTRY:
                digest = json.loads(body)
                digest["timestamps"] = [{
                    "authority": authority, "over": "evidence/manifest.json",
                    "time": token.time.isoformat(), "chain": token.chain_pem,
                    "token": base64.b64encode(token.response_der).decode(),
                }]  # fmt: skip
                body = json.dumps(digest).encode()
            new.writestr(info, body)


def test_the_summary_counts_its_checks_in_words() -> None:
    one = VerifyVerdict([Finding("manifest.json", True, "sha256 ...")])
    assert one.summary() == "1 check passed"
    two = VerifyVerdict([*one.findings, Finding("capture.wacz", True, "sha256 ...")])
    assert two.summary() == "2 checks passed"
