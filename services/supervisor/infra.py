"""The embedded engines for one machine: nats-server (JetStream) and SeaweedFS `weed mini`."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from services.supervisor.children import Child, free_ports, wait_for_port
from shared.errors import ConfigError

WEED_GOMEMLIMIT = "300MiB"
"""Go's soft memory limit for `weed mini` (unless GOMEMLIMIT is set already). Without it Go
lets the heap grow to twice what is live before collecting: storing 60-150 MB hostile
bodies, weed reached 390-580 MB PSS. It must stay well above what weed allocates at start
(~250 MiB of Go memory, half of it never touched: leveldb write buffers, the filer's log
buffers): at 256 MiB Go collected after every few hundred kB, 518 collections for 60
pages, and storing a page's artifacts (~3.6 MB in 6 objects) cost 0.24 CPU-s. At 300 MiB:
0.076 CPU-s, 20 collections, ~155 MB PSS (320 MiB: 0.061 and ~180 MB; no limit: 0.056
and 250+ MB, growing with the bodies stored)."""

MAX_PAYLOAD = 8 * 1024 * 1024
"""Largest NATS message: a post with thousands of links must fit (the default is 1 MiB)."""


def venv_binary(name: str) -> str:
    """A binary installed into this interpreter's environment (nats-server, weed), else PATH."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise ConfigError(f"{name} not found; install the project (pip install -e .)")
    return found


@dataclass
class Nats:
    """A running nats-server."""

    child: Child
    url: str

    @property
    def port(self) -> int:
        """The client port."""
        return int(self.url.rsplit(":", 1)[1])


def nats_argv(store_dir: Path, port: int) -> list[str]:
    """nats-server with JetStream on 127.0.0.1:`port`, its store and config (the payload
    limit) in `store_dir`; a cluster node adds its cluster flags."""
    conf = store_dir / "nats.conf"
    conf.write_text(f"max_payload: {MAX_PAYLOAD}\n")
    return [
        venv_binary("nats-server"), "-c", str(conf),
        "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store_dir),
    ]  # fmt: skip


def start_nats(store_dir: Path, log_path: Path | None = None, port: int = -1) -> Nats:
    """Start nats-server with JetStream on 127.0.0.1 (port -1 = a free port)."""
    store_dir.mkdir(parents=True, exist_ok=True)
    ports_dir = store_dir / "ports"
    ports_dir.mkdir(exist_ok=True)
    for old in ports_dir.glob("*.ports"):
        old.unlink()
    argv = [*nats_argv(store_dir, port), "--ports_file_dir", str(ports_dir)]
    child = Child("nats", argv, log_path=log_path).start()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        files = list(ports_dir.glob("*.ports"))
        try:  # the server may still be writing the file
            info = json.loads(files[0].read_text()) if files else None
        except (ValueError, OSError):
            info = None
        if info:
            url = info["nats"][0]
            host_port = url.split("//", 1)[1]
            host, _, p = host_port.rpartition(":")
            if wait_for_port(host, int(p), 5):
                return Nats(child, url)
        if not child.alive():
            break
        time.sleep(0.05)
    child.stop()
    raise ConfigError(f"nats-server did not start (see {log_path})")


@dataclass
class S3Credentials:
    """Access keys of the embedded S3 server."""

    access_key: str
    secret_key: str


def load_or_create_credentials(data_dir: Path) -> S3Credentials:
    """Credentials from the environment, else from DATA_DIR/s3-credentials, created once."""
    env_key = os.environ.get("AWS_ACCESS_KEY_ID")
    env_secret = os.environ.get("AWS_SECRET_ACCESS_KEY")
    if env_key and env_secret:
        return S3Credentials(env_key, env_secret)
    path = data_dir / "s3-credentials"
    if path.exists():
        lines = dict(line.split("=", 1) for line in path.read_text().split() if "=" in line)
        return S3Credentials(lines["AWS_ACCESS_KEY_ID"], lines["AWS_SECRET_ACCESS_KEY"])
    creds = S3Credentials("dla" + secrets.token_hex(8), secrets.token_urlsafe(30))
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(
            f"AWS_ACCESS_KEY_ID={creds.access_key}\nAWS_SECRET_ACCESS_KEY={creds.secret_key}\n"
        )
    return creds


@dataclass
class Weed:
    """A running SeaweedFS `weed mini` serving S3."""

    child: Child
    endpoint: str
    ports: list[int]


WEED_PORTS = 13


def start_weed(
    data_dir: Path,
    bucket: str,
    creds: S3Credentials,
    log_path: Path | None = None,
    ports: list[int] | None = None,
) -> Weed:
    """Start `weed mini` bound to 127.0.0.1, telemetry off, on `ports` (default: free ones).
    Free ports are only free when asked for: another process may bind one of the 13 before
    weed does, and weed then exits at once ("address already in use"), so with ports of its
    own choosing it tries twice more with fresh ones."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for _ in range(1 if ports else WEED_START_TRIES):
        chosen = ports or with_admin_pair(free_ports(WEED_PORTS))
        child, s3 = _weed_child(data_dir, bucket, creds, log_path, chosen)
        if _listening(child, s3, 60):
            return Weed(child, f"http://127.0.0.1:{s3}", chosen)
        exited = not child.alive()
        child.stop()
        if not exited:
            break  # it hung: new ports would not help
    raise ConfigError(f"weed mini did not start (see {log_path})")


WEED_START_TRIES = 3
WEED_ADMIN = 8
"""Index of the admin's HTTP port in weed's port list (`_weed_child`); its gRPC port follows."""
WEED_GRPC_OFFSET = 10000
"""weed mini's maintenance worker dials the admin's gRPC at the admin's HTTP port plus this,
whatever `-admin.port.grpc` says (SeaweedFS 4.48): on any other gRPC port it logged a failed
connection every 5 s for as long as it ran (4 KB of s3.log a minute) and ran no maintenance."""


def with_admin_pair(ports: list[int]) -> list[int]:
    """`ports` with the admin's HTTP and gRPC ports WEED_GRPC_OFFSET apart: one of them whose
    port plus the offset is free too becomes the admin's (unchanged when none is)."""
    for i, port in enumerate(ports):
        grpc = port + WEED_GRPC_OFFSET
        if grpc in ports or not _free(grpc):
            continue
        chosen = list(ports)
        chosen[i], chosen[WEED_ADMIN] = chosen[WEED_ADMIN], port
        chosen[WEED_ADMIN + 1] = grpc
        return chosen
    return ports


def _free(port: int) -> bool:
    """True when port can be bound on 127.0.0.1 now."""
    if port >= 65536:
        return False
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening(child: Child, port: int, timeout: float) -> bool:
    """True once child accepts on port; False at the timeout or as soon as it exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and child.alive():
        if wait_for_port("127.0.0.1", port, 0.2):
            return True
    return False


def _weed_child(
    data_dir: Path, bucket: str, creds: S3Credentials, log_path: Path | None, ports: list[int]
) -> tuple[Child, int]:
    (
        master, master_g, volume, volume_g, filer, filer_g,
        s3, s3_g, admin, admin_g, iceberg, lance, metrics,
    ) = ports  # fmt: skip
    argv = [
        venv_binary("weed"), "mini", f"-dir={data_dir}",
        "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
        f"-bucket={bucket}", "-webdav=false", "-admin.ui=false",
        f"-master.port={master}", f"-master.port.grpc={master_g}",
        f"-volume.port={volume}", f"-volume.port.grpc={volume_g}",
        f"-filer.port={filer}", f"-filer.port.grpc={filer_g}",
        f"-s3.port={s3}", f"-s3.port.grpc={s3_g}",
        f"-admin.port={admin}", f"-admin.port.grpc={admin_g}",
        f"-s3.port.iceberg={iceberg}", f"-s3.port.lance={lance}",
        f"-metricsPort={metrics}", "-metricsIp=127.0.0.1",
    ]  # fmt: skip
    env = dict(os.environ)
    env["AWS_ACCESS_KEY_ID"] = creds.access_key
    env["AWS_SECRET_ACCESS_KEY"] = creds.secret_key
    env.setdefault("GOMEMLIMIT", WEED_GOMEMLIMIT)
    child = Child("s3", argv, env=env, log_path=log_path).start()
    return child, s3
