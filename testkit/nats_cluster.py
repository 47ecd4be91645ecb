"""A real 3-node NATS JetStream cluster on 127.0.0.1, for scaling and failover tests.

Each node is a `nats-server` from the venv with its own store dir, client port and cluster
port, routed to the others. `kill(i)` SIGKILLs one node and `restart(i)` brings it back on
the same ports and store, so a test can kill a stream leader and watch the rest carry on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import nats
from nats.js.api import StreamConfig

from services.supervisor.children import Child, free_ports, wait_for_port
from services.supervisor.infra import nats_argv


@dataclass
class Node:
    """One cluster member."""

    name: str
    client_port: int
    cluster_port: int
    store: Path
    child: Child | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.client_port}"


@dataclass
class NatsCluster:
    """A running cluster of `size` nodes; stop() stops every node by PID."""

    root: Path
    size: int = 3
    name: str = "dla-test"
    nodes: list[Node] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated (the form NATS_URL takes)."""
        return ",".join(n.url for n in self.nodes)

    def start(self) -> NatsCluster:
        ports = free_ports(2 * self.size)
        for i in range(self.size):
            store = self.root / f"n{i}"
            store.mkdir(parents=True, exist_ok=True)
            self.nodes.append(Node(f"n{i}", ports[2 * i], ports[2 * i + 1], store))
        for i in range(self.size):
            self._launch(i)
        for node in self.nodes:
            if not wait_for_port("127.0.0.1", node.client_port, 15):
                self.stop()
                raise RuntimeError(f"nats node {node.name} did not start")
        self.wait_for_jetstream()
        return self

    def _launch(self, i: int) -> None:
        node = self.nodes[i]
        routes = ",".join(
            f"nats://127.0.0.1:{n.cluster_port}" for n in self.nodes if n.name != node.name
        )
        argv = [
            *nats_argv(node.store, node.client_port),
            "--server_name", node.name, "--cluster_name", self.name,
            "--cluster", f"nats://127.0.0.1:{node.cluster_port}", "--routes", routes,
        ]  # fmt: skip
        node.child = Child(f"nats-{node.name}", argv, log_path=node.store / "nats.log").start()

    def wait_for_jetstream(self, timeout: float = 60) -> None:
        """Until the cluster places a stream on every node (a meta leader alone is not enough:
        under load, peers join late and R3 placement fails with "no suitable peers")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._meta_leader_from_logs() and asyncio.run(self._probe_placement()):
                return
            time.sleep(0.3)
        raise RuntimeError("the JetStream cluster cannot place a stream on every node")

    async def _probe_placement(self) -> bool:
        try:
            servers = self.url.split(",")
            nc = await nats.connect(servers, connect_timeout=2, max_reconnect_attempts=0)
        except Exception:
            return False
        try:
            js = nc.jetstream(timeout=5)
            await js.add_stream(
                StreamConfig(name="PLACEMENT_PROBE", subjects=["probe.>"], num_replicas=self.size)
            )
            await js.delete_stream("PLACEMENT_PROBE")
            return True
        except Exception:
            return False
        finally:
            await nc.close()

    def _meta_leader_from_logs(self) -> bool:
        for node in self.nodes:
            log = node.store / "nats.log"
            if log.exists() and "JetStream cluster new metadata leader" in log.read_text(
                errors="replace"
            ):
                return True
        return False

    def kill(self, i: int) -> None:
        """SIGKILL node i."""
        child = self.nodes[i].child
        if child is not None and child.proc is not None and child.proc.poll() is None:
            child.proc.kill()
            child.proc.wait(10)

    def restart(self, i: int) -> None:
        """Start node i again on its ports and store."""
        self._launch(i)
        if not wait_for_port("127.0.0.1", self.nodes[i].client_port, 15):
            raise RuntimeError(f"nats node {self.nodes[i].name} did not restart")

    def stop(self) -> None:
        for node in self.nodes:
            if node.child is not None:
                node.child.stop()

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
