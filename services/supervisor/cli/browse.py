"""`dla status`, `dla ls`, `dla search`, `dla show`, `dla export`: what the archive holds."""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from services.supervisor.cli.errors import CliError, Exit
from services.supervisor.cli.output import highlighted, out, print_json, short, table
from services.supervisor.cli.stack_client import StackClient, connect_nats, stack_client
from services.supervisor.names import SERVICES
from shared.setting_names import read_report
from shared.spreadsheet_cells import text_cell

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
ForumOpt = Annotated[
    str | None,
    typer.Option(help="Only links posted on this forum (its host, as `dla show` names it)."),
]


def with_forum(params: dict[str, str | int], forum: str | None) -> dict[str, str | int]:
    """The query parameters, with `forum` when one is given."""
    return params | {"forum": forum} if forum else params


def healthz_url(client: StackClient, service: str) -> str | None:
    """A service's /healthz here (None: no port file, it was not started here)."""
    if service == "web":
        return f"{client.web_url}/healthz"
    try:
        port = int((client.settings.data_dir / "run" / f"{service}.port").read_text().strip())
    except (OSError, ValueError):
        return None
    return f"http://{client.settings.metrics_host}:{port}/healthz"


def feed_state(health: dict[str, Any]) -> str:
    """A feed's health report (shared.feed_health, from /admin/queue.json) in a line: 'ok ·
    answered 2026-11-30 14:44:52Z', 'failing since …, 3 poll(s): http_status: HTTP 404 …'."""
    waits = health.get("wait_until")
    asked = f" · next poll {_seconds(waits)} (the forum asked us to wait)" if waits else ""
    if not health.get("ok", True):
        return (
            f"failing since {_seconds(health.get('failing_since'))},"
            f" {health.get('failures')} poll(s): {health.get('error')}{asked}"
        )
    return f"ok · answered {_seconds(health.get('last_success'))}{asked}"


def _seconds(iso: object) -> str:
    """'2026-11-30T14:47:28.280559Z' -> '2026-11-30 14:47:28Z'."""
    text = str(iso)
    return text[:19].replace("T", " ") + "Z" if len(text) >= 19 else text


def health(client: StackClient) -> dict[str, str]:
    """Each service's /healthz: up, unhealthy (its status), not answering (it took the connection
    and gave no answer within `CLI_TIMEOUT_SECONDS`: busy or hung, not down), down (nothing
    listens), or unknown (no port file: not started here). Asked of every service at once."""
    return states(health_answers(client))


def states(answers: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Each service's state of `health_answers`."""
    return {name: state for name, (state, _) in answers.items()}


def health_answers(client: StackClient) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each service's state (as `health` says it) and the JSON its /healthz answered ({}
    when none)."""
    timeout = client.settings.cli_timeout_seconds
    urls = {name: healthz_url(client, name) for name in SERVICES}

    def ask(http: httpx.Client, url: str | None) -> tuple[str, dict[str, Any]]:
        if url is None:
            return "unknown", {}
        try:
            resp = http.get(url)
        except httpx.TimeoutException:
            return f"not answering (no answer in {timeout:g} s)", {}
        except httpx.HTTPError:
            return "down", {}
        try:
            body = resp.json()
        except ValueError:
            body = None
        state = "up" if resp.status_code == 200 else f"unhealthy ({resp.status_code})"
        return state, body if isinstance(body, dict) else {}

    # one client for all (httpx.get builds a client and its TLS context each call: ~60 ms
    # of CPU, against ~3 ms a request on a shared one)
    with httpx.Client(timeout=timeout) as http, ThreadPoolExecutor(len(urls)) as pool:
        answers = dict(zip(urls, pool.map(lambda url: ask(http, url), urls.values()), strict=True))
    for name, (state, body) in answers.items():
        refused = read_report(client.settings.data_dir, name).refused
        if state in ("down", "unknown") and refused:  # it stops at start: say why
            answers[name] = (f"stopped at start, setting refused: {'; '.join(refused)}", body)
    return answers


def fonts_missing(archiver_health: dict[str, Any]) -> list[str] | None:
    """The writing systems the archiver's browser has no font for (its /healthz
    `fonts_missing`, services/archiver/fonts.py); None when it does not say."""
    found = archiver_health.get("fonts_missing")
    return [str(name) for name in found] if isinstance(found, list) else None


async def backlog(nats_url: str, timeout: float) -> dict[str, dict[str, int]]:
    """Per consumer: messages not yet delivered and delivered but not acknowledged."""
    from shared.subjects import CONSUMERS

    nc = await connect_nats(nats_url, timeout)
    try:
        js = nc.jetstream(timeout=timeout)
        found: dict[str, dict[str, int]] = {}
        for spec in CONSUMERS:
            try:
                info = await js.consumer_info(spec.stream.name, spec.durable)
            except Exception:
                continue
            found[f"{spec.stream.name}/{spec.durable}"] = {
                "pending": int(info.num_pending or 0),
                "in_flight": int(info.num_ack_pending or 0),
            }
        return found
    finally:
        await nc.close()


def register(app: typer.Typer) -> None:
    """Add these subcommands to `dla`."""

    @app.command()
    def status(as_json: JsonOpt = False) -> None:
        """Services up, each feed's last answer (or why it fails), backlog per stream,
        captures per minute, failures in the last hour by error code, liveness checks due,
        running and their answers, the oldest pending job."""
        with stack_client() as client:
            answers = health_answers(client)
            services = states(answers)
            no_font = fonts_missing(answers.get("archiver", ("", {}))[1])
            try:
                streams = asyncio.run(backlog(client.nats_url, client.settings.cli_timeout_seconds))
            except Exception as exc:
                streams, nats_error = {}, f"NATS at {client.nats_url} not reachable ({exc})"
            else:
                nats_error = ""
            queue: dict[str, Any] = {}
            queue_error = ""
            try:
                queue = client.get_json("/admin/queue.json")
            except CliError as exc:
                if all(v != "up" for v in services.values()) and nats_error:
                    raise CliError(
                        "the archive is not running (no service answers, NATS unreachable)",
                        Exit.UNREACHABLE,
                    ) from None
                queue_error = str(exc)
        data = {"services": services, "fonts_missing": no_font, "backlog": streams, **queue}
        if as_json:
            print_json(data)
            return
        table("services", ["service", "state"], services.items())
        if no_font:
            out.print(
                f"the archiver's browser has no font for {', '.join(no_font)}: screenshots and"
                " PDFs of such pages show empty boxes (its log names the packages to install)",
                style="yellow",
            )
        watched = queue.get("feeds") or []
        if watched:
            table("feeds", ["feed", "state"], [(f.get("feed"), feed_state(f)) for f in watched])
        if nats_error:
            out.print(nats_error, style="yellow")
        else:
            table(
                "backlog",
                ["stream/consumer", "pending", "in flight"],
                [(k, v["pending"], v["in_flight"]) for k, v in streams.items()],
            )
        if queue_error:
            out.print(f"queue figures unavailable: {queue_error}", style="yellow")
            return
        jobs = queue.get("jobs", {})
        out.print(
            "jobs: "
            + (", ".join(f"{k} {v}" for k, v in sorted(jobs.items())) or "none")
            + (
                f" ({queue['declined_jobs']} of the failed declined by their page, not retried)"
                if queue.get("declined_jobs")
                else ""
            )
            + f"  ·  captures/min (last 10 min): {queue.get('captures_per_minute', 0)}"
        )
        for pause in queue.get("domains_backing_off") or []:
            out.print(
                f"{pause['domain']} asked us to slow down ({pause['reason']}): nothing goes"
                f" to it until {pause['until']}",
                style="yellow",
            )
        fails = queue.get("failures_last_hour") or {}
        if fails:
            table("failures in the last hour", ["error code", "count"], fails.items())
        else:
            out.print("failures in the last hour: none")
        checks = queue.get("liveness")
        if checks:
            answers = checks.get("checked_last_day") or {}
            out.print(
                f"liveness checks: {checks['due']} due, {checks['running']} running,"
                f" {checks['watched']} links watched  ·  last 24 h: "
                + (", ".join(f"{k} {v}" for k, v in sorted(answers.items())) or "none")
            )
        oldest = queue.get("oldest_pending")
        if oldest:
            out.print(
                f"oldest pending job: #{oldest['id']} ({oldest['status']}, since "
                f"{oldest['enqueued_at']}, {oldest['attempts']} attempt(s)) {oldest['url']}"
            )
        else:
            out.print("oldest pending job: none")

    @app.command("ls")
    def ls(
        limit: Annotated[int, typer.Option(help="How many (newest first).", min=1, max=1000)] = 50,
        forum: ForumOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """The newest archives, as the home page lists them."""
        with stack_client() as client:
            data = client.get_json("/index.json", params=with_forum({"limit": limit}, forum))
        links = data.get("links", []) if isinstance(data, dict) else []
        if as_json:
            print_json(data)
            return
        table(
            None,
            ["id", "status", "archived", "domain", "title / url"],
            [
                (
                    link.get("id"),
                    link.get("status_label") or link.get("status"),
                    short(link.get("last_archived_at"), 19),
                    link.get("domain"),
                    short(link.get("title") or link.get("url"), 60),
                )
                for link in links[:limit]
            ],
        )

    @app.command()
    def search(
        query: Annotated[str, typer.Argument(help="Words to find (searched as words).")],
        limit: Annotated[int, typer.Option(help="How many results.", min=1, max=1000)] = 20,
        forum: ForumOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Full-text search over titles, URLs and text, as /search does."""
        if not query.strip():
            raise CliError("say what to search for: dla search WORDS", Exit.USAGE)
        params = with_forum({"q": query, "limit": limit}, forum)
        with stack_client() as client:
            data = client.get_json("/search.json", params=params)
        if as_json:
            print_json(data)
            return
        results = data.get("results", []) if isinstance(data, dict) else []
        table(
            f"{data.get('total', len(results))} result(s)",
            ["id", "domain", "title", "snippet"],
            [
                (
                    r.get("link_id"),
                    r.get("domain"),
                    short(r.get("title") or r.get("url"), 40),
                    highlighted(r.get("snippet"), 60),
                )
                for r in results
            ],
        )

    @app.command()
    def show(
        link_id: Annotated[int, typer.Argument(help="The link's id.", min=1)],
        as_json: JsonOpt = False,
    ) -> None:
        """Everything the web shows about one link."""
        with stack_client() as client:
            data = client.get_json(f"/links/{link_id}.json")
        if as_json:
            print_json(data)
            return
        print_link(link_id, data)

    @app.command()
    def export(
        fmt: Annotated[str, typer.Option("--format", help="jsonl or csv.")] = "jsonl",
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write here (default stdout).")
        ] = None,
    ) -> None:
        """Every public archive, from /export/links.jsonl, as JSON lines or CSV."""
        if fmt not in ("jsonl", "csv"):
            raise CliError(f"--format is jsonl or csv, not {fmt!r}", Exit.USAGE)
        with stack_client() as client:
            lines = client.stream_lines("/export/links.jsonl")
            sink = output.open("w", encoding="utf-8", newline="") if output else sys.stdout
            try:
                count = write_export(lines, fmt, sink)
            finally:
                if output:
                    sink.close()
        if output:
            out.print(f"{count} link(s) written to {output}")


def write_export(lines: Any, fmt: str, sink: Any) -> int:
    """Copy JSON lines, or turn them into CSV (nested values as JSON); returns the count."""
    count = 0
    writer: csv.DictWriter[str] | None = None
    for line in lines:
        if not line.strip():
            continue
        count += 1
        if fmt == "jsonl":
            sink.write(line.rstrip("\n") + "\n")
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise CliError(f"the export sent a line that is not JSON: {short(line, 60)}") from None
        flat = {  # as text a spreadsheet never runs (a title "=HYPERLINK(...)")
            k: text_cell(json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v)
            for k, v in record.items()
        }
        if writer is None:
            writer = csv.DictWriter(sink, fieldnames=list(flat), extrasaction="ignore")
            writer.writeheader()
        writer.writerow(flat)
    return count


def print_link(link_id: int, data: dict[str, Any]) -> None:
    """`dla show`'s tables: the link's fields, where it was posted, its snapshots, its videos
    and recordings, and what is known of its original now (the link page's sections)."""
    scalars = [(k, v) for k, v in data.items() if not isinstance(v, list | dict)]
    meta = data.get("metadata") or {}
    scalars += [(f"metadata.{k}", v) for k, v in meta.items() if v]
    table(f"link {link_id}", ["field", "value"], [(k, short(v, 90)) for k, v in scalars])
    source = data.get("source_status") or {}
    checked = source.get("last_checked_at") or source.get("next_check_at")
    sections = (
        ("where posted", ["forum", "post", "by", "seen", "quoted"], [
            (
                o.get("forum"), short(o.get("topic_title") or o.get("post_url"), 50),
                o.get("author") or "", short(o.get("seen_at"), 19),
                "quoted" if o.get("in_quote") else "",
            )
            for o in data.get("occurrences") or []
        ]),
        ("snapshots", ["snapshot", "job", "kept", "started", "results"], [
            (
                s.get("id"), s.get("status"),
                s.get("outcome") or "",  # what the capture kept: partial, ...
                s.get("started_at"),
                short(", ".join(f"{r.get('plugin')}:{r.get('status')}"
                                for r in s.get("results", [])), 80),
            )
            for s in data.get("snapshots") or []
        ]),
        ("videos and recordings", ["platform", "id", "title", "status", "files"], [
            (
                v.get("platform"), short(v.get("video_id"), 40), short(v.get("title"), 40),
                " · ".join(str(x) for x in (v.get("status"), v.get("error_code")) if x),
                ", ".join(sorted({str(f.get("kind")) for f in v.get("files") or []})),
            )
            for v in data.get("videos") or []
        ]),
        ("the original now", ["state", "since", "reason", "last checked", "next check"], [
            (
                source.get("state"), short(source.get("since"), 20),
                short(source.get("reason"), 40), short(source.get("last_checked_at"), 20),
                short(source.get("next_check_at"), 20),
            )
        ] if checked else []),
    )  # fmt: skip
    for title, columns, rows in sections:
        if rows:
            table(title, columns, rows)
