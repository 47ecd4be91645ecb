"""`dla verify LINK_ID | FILE.wacz | manifest.json`: check a capture's evidence.

Every hash is recomputed: a link's files are downloaded through the web's public
`/artifacts/` links (presigned S3), a WACZ is checked on its own (its datapackage digests,
the manifest it carries, the WARCs that manifest lists, the timestamp tokens a WACZ of an
earlier version carries in its datapackage-digest.json) and with the tokens over its
manifest (beside it, or the archive's when it answers: a token that came after the WACZ is
a file of its own), a manifest against the files beside it (`<plugin>/<path>`, as the
bucket lays them out; those missing are downloaded when the archive's web answers) and its
tokens (`timestamps/<fingerprint 16>/*.tsr` beside it, or the archive's). Tokens are checked
against the system's roots plus TSA_CA_FILE; one refused or invalid is shown with its
reason. One line per check, exit 1 on any mismatch.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import print_json, table
from services.supervisor.cli.stack_client import StackClient, stack_client
from shared.evidence import tsa
from shared.evidence.manifest import WACZ_PATH, Manifest, fingerprint, token_folder
from shared.evidence.settings import EvidenceSettings
from shared.evidence.verify import (
    VerifyVerdict,
    check_artifact,
    check_manifest,
    check_token,
    check_wacz,
    file_chunks,
)


def fetch(client: StackClient, url: str) -> bytes:
    """A small artifact (a manifest, a token) whole."""
    return b"".join(client.download(url))


def artifact_urls(link: dict[str, Any], snapshot_id: str) -> dict[tuple[str, str, str], str]:
    """(plugin, path, sha256) -> the artifact's URL, for one snapshot of a link's JSON (a
    re-run hook's file has the plugin and path of the earlier attempt's: the sha256 tells
    which one a manifest lists)."""
    return {
        (a.get("plugin") or "", a.get("path") or "", a.get("sha256") or ""): a["url"]
        for a in link.get("artifacts", [])
        if a.get("snapshot_id") == snapshot_id
    }


def verify_link(verdict: VerifyVerdict, link_id: int, roots: list[Any]) -> None:
    """Everything of the link's newest capture, from the public API and S3."""
    with stack_client() as client:
        link = client.get_json(f"/links/{link_id}.json")
        ev = link.get("evidence")
        if not ev or not ev.get("manifest_url"):
            raise CliError(f"link {link_id} has no manifest yet", Exit.NOT_FOUND)
        data = fetch(client, ev["manifest_url"])
        manifest = check_manifest(verdict, data, ev["fingerprint"])
        if manifest is None:
            return
        urls = artifact_urls(link, manifest.snapshot_id)
        for entry in manifest.artifacts:
            url = urls.get((entry.plugin, entry.path, entry.sha256))
            check_artifact(verdict, entry, client.download(url) if url else None)
        if ev.get("wacz_url"):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / WACZ_PATH
                with path.open("wb") as f:
                    for chunk in client.download(ev["wacz_url"]):
                        f.write(chunk)
                check_wacz(verdict, path, roots, WACZ_PATH)
        archive_tokens(verdict, client, ev, data, roots)


def archive_tokens(
    verdict: VerifyVerdict, client: StackClient, ev: dict[str, Any], data: bytes, roots: list[Any]
) -> None:
    """Each authority's token over the manifest `data` as the archive lists it: a granted
    one downloaded and checked, the others said (pending, or refused / invalid and why)."""
    for t in ev.get("timestamps", []):
        what = f"timestamp {t.get('authority')}"
        if t.get("status") == "granted" and t.get("token_url"):
            check_token(verdict, t["authority"], fetch(client, t["token_url"]), data, roots)
        elif t.get("status") in ("refused", "invalid"):
            verdict.add(what, True, f"{t['status']}, not asked again: {t.get('last_error')}")
        else:
            verdict.add(what, True, "pending (not granted yet)")


def verify_file(verdict: VerifyVerdict, path: Path, roots: list[Any]) -> None:
    """A WACZ, or a manifest and the files beside it (downloaded from the archive where
    missing); then the tokens over the manifest: beside it, else the archive's."""
    data: bytes | None
    missing: list[Any] = []
    if path.suffix == ".wacz":
        manifest, data = check_wacz(verdict, path, roots)
    else:
        data = path.read_bytes()
        manifest = check_manifest(verdict, data)
        for entry in manifest.artifacts if manifest else ():
            local = next(
                (p for p in (path.parent / entry.plugin / entry.path,
                             path.parent / Path(entry.path).name) if p.is_file()), None,
            )  # fmt: skip
            if local is None:
                missing.append(entry)
            else:
                check_artifact(verdict, entry, file_chunks(local))
    if manifest is None or data is None:
        return
    beside = path.parent  # timestamps/ alone: the layout before a folder per manifest
    folders = (beside / token_folder(fingerprint(data)), beside / "timestamps", beside)
    tokens = [t for folder in folders for t in sorted(folder.glob("*.tsr"))]
    for token in tokens:
        check_token(verdict, token.stem, token.read_bytes(), data, roots, f"timestamp {token.name}")
    if missing or not tokens:
        from_archive(verdict, manifest, data, missing, roots, want_tokens=not tokens)


def from_archive(
    verdict: VerifyVerdict,
    manifest: Manifest,
    data: bytes,
    missing: list[Any],
    roots: list[Any],
    *,
    want_tokens: bool,
) -> None:
    """The files a manifest lists that are not beside it, and its tokens, from the archive."""
    try:
        with stack_client() as client:
            link = client.get_json(f"/links/{manifest.link_id}.json")
            urls = artifact_urls(link, manifest.snapshot_id)
            for entry in missing:
                url = urls.get((entry.plugin, entry.path, entry.sha256))
                check_artifact(verdict, entry, client.download(url) if url else None)
            ev = link.get("evidence") or {}
            if want_tokens and ev.get("fingerprint") == fingerprint(data):
                archive_tokens(verdict, client, ev, data, roots)
    except CliError as exc:
        for entry in missing:
            verdict.add(entry.key, False, f"not beside the manifest, and the archive: {exc}")
        if want_tokens and not missing:
            verdict.add("timestamps", True, f"none beside the file; the archive: {exc}")


def run(target: str, as_json: bool) -> None:
    """`dla verify TARGET`: check, print the findings, exit non-zero on a mismatch."""
    settings = EvidenceSettings()
    roots = tsa.trusted_roots(settings.tsa_ca_file)
    verdict = VerifyVerdict()
    path = Path(target)
    if target.isdigit() and not path.exists():
        verify_link(verdict, int(target), roots)
    elif not path.is_file():
        raise CliError(f"no such file: {target}", Exit.NOT_FOUND)
    else:
        verify_file(verdict, path, roots)
    if as_json:
        print_json({"ok": verdict.ok, "findings": [f.__dict__ for f in verdict.findings]})
    else:
        table(
            f"verify {target}",
            ["file", "verdict", "detail"],
            [(f.what, "ok" if f.ok else "MISMATCH", f.detail) for f in verdict.findings],
        )
        print("verified" if verdict.ok else f"MISMATCH: {verdict.summary()}")
    if not verdict.ok:
        raise typer.Exit(int(Exit.FAILED))
