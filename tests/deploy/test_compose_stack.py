"""The compose stack, started for real (`make compose-test`): the images built here from
Debian's packages (deploy/containers/build-local.sh), `compose up` with docker-compose.yml and
docker-compose.local.yml under podman, a post archived through the containers, Prometheus
scraping them, a second archiver taking a capture, and `compose down` leaving nothing behind.

Traffic stays on this machine: the fixture forum and the page it links to are a container the
test starts on a network of its own, which the poller and the workers join; the published
ports are bound to 127.0.0.1.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.supervisor.children import free_ports
from testkit.compose import (
    LOCAL_BASE,
    ComposeProject,
    HealthTicker,
    PodmanApi,
    podman,
    require_local_images,
)
from testkit.forum import Post, posts_rss
from testkit.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.compose, pytest.mark.timeout(1800)]

FORUM, NEWS = "forum.test", "news.test"
"""The fixture container's two names: the forum, and the outside site its posts link to."""
BROWSER_SET = {"raw_response", "screenshot", "pdf", "dom"}
"""Artifact kinds a rendered capture keeps, whatever else it adds."""


def article(title: str, words: str) -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><article>"
        f"<h1>{title}</h1>" + f"<p>{words}</p>" * 12 + "</article></body></html>"
    ).encode()


class Site:
    """The fixture forum's files, served by a container from the local base image."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
        self.posts: list[Post] = []
        self.write("posts.rss", posts_rss(f"http://{FORUM}:8080", []))

    def write(self, name: str, body: bytes) -> None:
        path = self.folder / name
        path.write_bytes(body)
        path.chmod(0o644)

    def post(self, post_id: int, page: str, title: str, words: str) -> str:
        self.write(page, article(title, words))
        url = f"http://{NEWS}:8080/{page}"
        self.posts.append(Post(post_id, post_id, f'<p>Read <a href="{url}">{title}</a></p>'))
        self.write("posts.rss", posts_rss(f"http://{FORUM}:8080", self.posts, host=FORUM))
        return url


@pytest.fixture(scope="module")
def api() -> Iterator[PodmanApi]:
    require_local_images()
    service = PodmanApi()
    yield service
    service.stop()


@pytest.fixture(scope="module")
def stack(api: PodmanApi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    name = f"dlact{secrets.token_hex(3)}"
    volumes_before = set(podman("volume", "ls", "-q").split())
    tmp = tmp_path_factory.mktemp("compose")
    site = Site(tmp / "site")
    network = f"{name}-fixtures"
    podman("network", "create", network)
    podman(
        "run", "-d", "--name", f"{name}-fixture-web", "--network", network,
        "--network-alias", FORUM, "--network-alias", NEWS,
        "-v", f"{site.folder}:/site:ro", LOCAL_BASE,
        "python3", "-m", "http.server", "8080", "--bind", "0.0.0.0", "--directory", "/site",
    )  # fmt: skip
    override = tmp / "fixtures.yml"
    # the settings only this test needs reach every service of ours (a user's `.env` would)
    settings = {"ALLOW_PRIVATE_TARGETS": "true", "POLL_INTERVAL_SECONDS": "2", "TSA_URLS": ""}
    services: dict[str, dict[str, Any]] = {
        s: {"environment": settings} for s in ("writer", "poller", "web", "archiver", "media")
    }
    for s in ("poller", "archiver", "media"):  # those that fetch from the fixture forum
        services[s]["networks"] = ["default", "fixtures"]
    override.write_text(
        json.dumps(
            {"networks": {"fixtures": {"external": True, "name": network}}, "services": services}
        )
    )
    web, s3, prom = free_ports(3)
    env = {
        "RSS_URL": f"http://{FORUM}:8080/posts.rss", "ARCHIVE_MODE": "all",
        "WEB_PUBLISH_PORT": f"127.0.0.1:{web}", "S3_PUBLISH_PORT": f"127.0.0.1:{s3}",
        "S3_PUBLIC_ENDPOINT": f"http://127.0.0.1:{s3}",
        "PROMETHEUS_PUBLISH_PORT": f"127.0.0.1:{prom}",
        "AWS_ACCESS_KEY_ID": "dla-ct", "AWS_SECRET_ACCESS_KEY": secrets.token_urlsafe(18),
    }  # fmt: skip
    project = ComposeProject(name, api, override, env)
    running = Stack(project, site, f"http://127.0.0.1:{web}", f"http://127.0.0.1:{prom}")
    running.api, running.tmp, running.fixtures = api, tmp, network
    running.keys = {k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    try:
        with HealthTicker(name):
            project.run("up", "-d", "--wait", "--wait-timeout", "300")
            yield running
    finally:
        try:
            project.run("down", "--volumes", "--remove-orphans", "--timeout", "20")
        finally:
            podman("rm", "-f", "-t", "0", f"{name}-fixture-web", check=False)
            podman("network", "rm", "-f", network, check=False)
    assert project.leftovers() == {"containers": [], "networks": [], "volumes": []}
    # anonymous volumes (the images' VOLUME /data) carry no project label
    assert set(podman("volume", "ls", "-q").split()) <= volumes_before


class Stack:
    """The running project and the addresses the test reads it through."""

    api: PodmanApi
    tmp: Path
    fixtures: str
    """The fixture network's name."""
    keys: dict[str, str]
    """The S3 keys the stack runs with."""

    def __init__(self, project: ComposeProject, site: Site, web: str, prometheus: str) -> None:
        self.project, self.site, self.web, self.prometheus = project, site, web, prometheus

    def wait(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        def tails() -> str:
            return "\n".join(
                f"--- {c['Names'][0]} ({c.get('State')})\n{self.project.tail(c['Names'][0])}"
                for c in self.project.containers()
            )

        return wait_for(predicate, timeout, what, interval=1.0, explain=tails)

    def archived(self, url: str) -> dict[str, Any] | None:
        try:
            links = httpx.get(f"{self.web}/index.json", timeout=5).json()["links"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        for link in links:
            kinds = {a["kind"] for a in link["artifacts"]}
            if link["url"] == url and kinds >= BROWSER_SET:
                return dict(link)
        return None


def test_a_post_is_archived_through_the_containers(stack: Stack) -> None:
    url = stack.site.post(1, "first.html", "Harbour lanterns", "quillwort harbour lanterns")
    link = stack.wait(lambda: stack.archived(url), 300, "the first link archived")
    kinds = {a["kind"] for a in link["artifacts"]}
    assert kinds >= BROWSER_SET, kinds

    page = httpx.get(f"{stack.web}/links/{link['id']}", timeout=10)
    assert page.status_code == 200 and "Harbour lanterns" in page.text
    found = stack.wait(
        lambda: (
            httpx.get(f"{stack.web}/search.json", params={"q": "quillwort"}, timeout=10)
            .json()
            .get("results")
        ),
        60,
        "the page's words searchable",
    )
    assert any(r.get("url") == url or r.get("link_id") == link["id"] for r in found), found


def test_the_worker_image_draws_every_script(stack: Stack) -> None:
    """The archiver's fontconfig has a font for Chinese, Japanese, Korean, Arabic, ..., emoji
    (services/archiver/fonts.py): a page in any of them is screenshotted as text, not boxes."""
    missing = podman(
        "exec", stack.project.container("archiver", 1), "python", "-c",
        "from services.archiver import fonts; m = fonts.missing_scripts();"
        " print('unknown' if m is None else [s.name for s in m])",
    )  # fmt: skip
    assert missing.strip() == "[]"


def test_prometheus_scrapes_every_service(stack: Stack) -> None:
    def up_jobs() -> set[str] | None:
        try:
            answer = httpx.get(f"{stack.prometheus}/api/v1/query", params={"query": "up == 1"})
            result = answer.json()["data"]["result"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        hosts = {r["metric"].get("instance", "") for r in result}
        jobs = {r["metric"]["job"] for r in result}
        return jobs if "web" in jobs and len(hosts) >= 5 else None

    assert stack.wait(up_jobs, 120, "Prometheus scraping the services") >= {"services", "web"}


def test_a_second_archiver_takes_a_capture(stack: Stack) -> None:
    stack.project.run("up", "-d", "--no-recreate", "--scale", "archiver=2", "--wait")
    second = stack.project.container("archiver", 2)
    assert podman("inspect", "-f", "{{.State.Running}}", second).strip() == "true"
    podman("stop", "-t", "20", stack.project.container("archiver", 1))
    url = stack.site.post(2, "second.html", "Tidal clocks", "marram tidal clocks")
    stack.wait(lambda: stack.archived(url), 300, "the second link archived")
    assert f"{url} done" in stack.project.tail(second, lines=0)


def test_an_archiver_on_another_host_needs_only_the_address_of_nats_and_s3(stack: Stack) -> None:
    """docs/operations.md: on another host, the worker services alone (`--no-deps`) with
    NATS_URL, S3_ENDPOINT, S3_BUCKET and the keys. Here the other host is a second project
    whose only network is the first one's (as a LAN would be) and the fixture network."""
    name = f"{stack.project.name}b"
    override = stack.tmp / "other-host.yml"
    other_env = {
        "NATS_URL": "nats://nats:4222", "S3_ENDPOINT": "http://s3:8333",
        "S3_BUCKET": "link-archive", **stack.keys,
    }  # fmt: skip
    lan = f"{stack.project.name}_default"
    override.write_text(
        json.dumps(
            {
                "networks": {
                    "lan": {"external": True, "name": lan},
                    "fixtures": {"external": True, "name": stack.fixtures},
                },
                "services": {
                    "archiver": {
                        "networks": ["lan", "fixtures"],
                        "environment": {"ALLOW_PRIVATE_TARGETS": "true"},
                    }
                },
            }
        )
    )
    other = ComposeProject(name, stack.api, override, other_env)
    try:
        other.run("up", "-d", "--no-deps", "archiver")
        for n in (1, 2):  # the first host's archivers stop: only the other host's can capture
            podman("stop", "-i", "-t", "20", stack.project.container("archiver", n))
        url = stack.site.post(3, "third.html", "Salt marsh", "samphire salt marsh")
        stack.wait(lambda: stack.archived(url), 300, "the third link archived")
        assert f"{url} done" in other.tail(other.container("archiver", 1), lines=0)
    finally:
        other.run("down", "--volumes", "--timeout", "20")
    assert other.leftovers() == {"containers": [], "networks": [], "volumes": []}
