"""A webhook receiver on 127.0.0.1 that keeps every JSON body POSTed to it (Alertmanager's)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from testkit.httpserver import serving_thread


class WebhookReceiver:
    """Keeps each POSTed JSON body in `bodies`; `url` is where to send them."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with receiver.arrived:
                    receiver.bodies.append(body)
                    receiver.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/alerts"
        self._thread = serving_thread(self._server)

    def wait_for(self, status: str, alertname: str, timeout: float) -> dict[str, Any]:
        """The first body whose `status` is `status` ("firing"/"resolved") and that holds an
        alert named `alertname`; AssertionError when none came within `timeout`."""
        with self.arrived:
            found = self.arrived.wait_for(lambda: self._find(status, alertname), timeout)
        assert found, f"no {status} {alertname} within {timeout}s; got {self.bodies}"
        return found

    def _find(self, status: str, alertname: str) -> dict[str, Any] | None:
        for body in self.bodies:
            names = {a["labels"].get("alertname") for a in body.get("alerts", [])}
            if body.get("status") == status and alertname in names:
                return body
        return None

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
