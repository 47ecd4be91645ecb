"""Finding the running stack from the settings `dla up` uses, and talking to it.

`dla up` writes DATA_DIR/run/stack.json (the NATS URL it started, the web address) while it
runs; explicit NATS_URL / WEB_URL / WEB_PORT win over it. Admin actions send the token from
ADMIN_TOKEN (or ADMIN_TOKENS' first), else the one `dla up` generated in DATA_DIR/admin-token.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import Field, SecretStr

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.stack_file import read_stack_file
from shared import admin_tokens
from shared.settings import CommonSettings

if TYPE_CHECKING:
    from nats.aio.client import Client as Nats

DOWNLOAD_CHUNK = 1 << 20


class CliSettings(CommonSettings):
    """What the `dla` subcommands read (the same variables as `dla up`)."""

    web_url: str | None = Field(
        None, description="Where the web UI/API answers (default: from WEB_HOST/WEB_PORT)."
    )
    web_host: str = Field("127.0.0.1", description="Bind address of the UI.")
    web_port: int = Field(8000, description="Port of the UI (also serves /healthz, /metrics).")
    admin_token: SecretStr | None = Field(
        None, description="The admin token (single, named `admin`)."
    )
    admin_tokens: SecretStr | None = Field(
        None, description="Named admin tokens, `name:secret,...` (actions record the name)."
    )
    cli_timeout_seconds: float = Field(
        10.0, gt=0, description="How long `dla` waits for one answer from the web or NATS."
    )


class StackClient:
    """The web API and NATS of the running stack."""

    def __init__(self, settings: CliSettings | None = None) -> None:
        self.settings = settings or CliSettings()
        info = self._stack_file()
        self.web_url = (
            self.settings.web_url
            or (None if "WEB_PORT" in os.environ else info.get("web_url"))
            or f"http://{self.settings.web_host}:{self.settings.web_port}"
        ).rstrip("/")
        self.nats_url = (self.settings.nats_url if "NATS_URL" in os.environ else None) or str(
            info.get("nats_url") or self.settings.nats_url
        )
        self._http: httpx.Client | None = None
        self._files: httpx.Client | None = None

    def _stack_file(self) -> dict[str, Any]:
        return read_stack_file(self.settings.data_dir)

    def token(self) -> str | None:
        """The admin token to send, if any is configured."""
        if self.settings.admin_token is not None:
            return self.settings.admin_token.get_secret_value()
        if self.settings.admin_tokens is not None:
            try:
                tokens = admin_tokens.parse(self.settings.admin_tokens.get_secret_value(), None)
            except admin_tokens.TokenFormatError as exc:
                raise CliError(str(exc), Exit.INVALID) from None
            return next(iter(tokens.values()), None)
        return admin_tokens.read_file(self.settings.data_dir)

    @property
    def http(self) -> httpx.Client:
        if self._http is None:
            headers = {"Accept": "application/json", "User-Agent": "dla-cli"}
            token = self.token()
            if token:
                headers["Authorization"] = f"Bearer {token}"
            self._http = httpx.Client(
                base_url=self.web_url,
                headers=headers,
                timeout=self.settings.cli_timeout_seconds,
                follow_redirects=False,
            )
        return self._http

    def close(self) -> None:
        for http in (self._http, self._files):
            if http is not None:
                http.close()

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """One request; errors become CliError with the right exit code."""
        try:
            resp = self.http.request(method, path, **kw)
        except httpx.TransportError as exc:
            raise CliError(
                f"the archive's web API at {self.web_url} is not reachable ({type(exc).__name__});"
                " is `dla up` running?",
                Exit.UNREACHABLE,
            ) from None
        if resp.status_code < 400:
            return resp
        detail = _detail(resp)
        if resp.status_code in (401, 403):
            raise CliError(f"refused: {detail} (check ADMIN_TOKEN)", Exit.DENIED)
        if resp.status_code == 404:
            if detail == "Not Found":  # FastAPI's answer for a route it does not have
                detail = f"this web does not serve {path.split('?')[0]}"
            raise CliError(f"not found: {detail}", Exit.NOT_FOUND)
        if resp.status_code in (400, 409, 413, 415, 422):
            raise CliError(f"refused: {detail}", Exit.INVALID)
        if resp.status_code == 429:
            raise CliError(f"too many requests: {detail}", Exit.FAILED)
        if resp.status_code == 503:
            raise CliError(f"the archive cannot take this now: {detail}", Exit.UNREACHABLE)
        raise CliError(f"{method} {path} answered {resp.status_code}: {detail}", Exit.FAILED)

    def get_json(self, path: str, **kw: Any) -> Any:
        resp = self.request("GET", path, **kw)
        try:
            return resp.json()
        except ValueError:
            raise CliError(f"GET {path} did not answer JSON", Exit.FAILED) from None

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        resp = self.request("POST", path, json=body)
        try:
            return resp.json()
        except ValueError:
            return {}

    def stream_lines(self, path: str) -> Iterator[str]:
        """The lines of a streamed response (exports)."""
        try:
            with self.http.stream("GET", path, timeout=None) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    self._raise_for(resp, path)
                yield from resp.iter_lines()
        except httpx.TransportError as exc:
            raise CliError(
                f"the web API at {self.web_url} stopped answering ({type(exc).__name__})",
                Exit.UNREACHABLE,
            ) from None

    def download(self, url: str) -> Iterator[bytes]:
        """An artifact's bytes through the web, following its redirect to S3 (one client for
        every file of the command). The admin token, when there is one, goes to the web alone
        (a private file of a logged-in capture needs it; httpx drops it on the redirect to
        another origin)."""
        if self._files is None:
            self._files = httpx.Client(
                base_url=self.web_url,
                follow_redirects=True,
                timeout=self.settings.cli_timeout_seconds,
            )
        token = self.token()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with self._files.stream("GET", url, headers=headers) as resp:
            if resp.status_code != 200:
                raise CliError(f"GET {url} answered {resp.status_code}", Exit.FAILED)
            yield from resp.iter_bytes(DOWNLOAD_CHUNK)

    def _raise_for(self, resp: httpx.Response, path: str) -> None:
        if resp.status_code == 404:
            raise CliError(f"{path} is not served by this web ({_detail(resp)})", Exit.NOT_FOUND)
        raise CliError(f"GET {path} answered {resp.status_code}: {_detail(resp)}", Exit.FAILED)


def _detail(resp: httpx.Response) -> str:
    """The server's reason, in one line."""
    try:
        body = resp.json()
    except ValueError:
        return resp.text.strip().splitlines()[0][:200] if resp.text.strip() else resp.reason_phrase
    if isinstance(body, dict):
        for key in ("detail", "error", "message", "reason"):
            if isinstance(body.get(key), str):
                return str(body[key])
        if isinstance(body.get("detail"), list):
            return "; ".join(str(d.get("msg", d)) for d in body["detail"])[:200]
    return str(body)[:200]


@contextmanager
def stack_client() -> Iterator[StackClient]:
    """A client for one command."""
    client = StackClient()
    try:
        yield client
    finally:
        client.close()


async def connect_nats(nats_url: str, timeout: float) -> Nats:
    """A NATS connection for one command, given up on quickly when NATS is not there."""
    import nats  # here, not at the top: `dla --help` should not pay for the NATS client

    async def quiet(exc: Exception) -> None:  # the caller reports the failure in one line
        pass

    servers = [s.strip() for s in nats_url.split(",") if s.strip()]
    # two quick tries per server: nats-py retries even a first connection (60 times, 2 s
    # apart, allow_reconnect=False or not), so a stopped archive took the whole 5 s to report
    return await asyncio.wait_for(
        nats.connect(
            servers=servers, name="dla-cli", allow_reconnect=False, connect_timeout=2,
            max_reconnect_attempts=1, reconnect_time_wait=0, error_cb=quiet,
        ),
        timeout=min(timeout, 5.0),
    )  # fmt: skip
