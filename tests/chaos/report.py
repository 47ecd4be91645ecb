"""Write the figures of a `make chaos` run (CHAOS_FIGURES, JSON lines) into docs/reliability.md.

python -m tests.chaos.report /tmp/dla-chaos-figures.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.report import write_section

DOC = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
TITLE = "Fault runs (issue 12)"
COMMAND = "make chaos"


def _losses(fig: dict[str, Any]) -> str:
    lost = sum(v for v in fig.get("lost", {}).values() if isinstance(v, int | float))
    dup = sum(v for v in fig.get("duplicated", {}).values() if isinstance(v, int | float))
    again = fig.get("recaptured", {}).get("links", 0)
    return f"{lost:g} lost, {dup:g} duplicated" + (
        f", {again} fetched again by a later try" if again else ""
    )


def row(fig: dict[str, Any]) -> tuple[str, str, str]:
    """(fault, what happened, recovery) of one run."""
    name = fig["name"]
    if name == "kill9":
        kills = ", ".join(f"{k} {v}" for k, v in fig["kills"].items())
        rec = fig["recovery"]
        return (
            f"kill -9 of each service at {sum(fig['kills'].values())} random moments"
            f" ({kills}), {fig['links']} links in {fig['posts']} posts",
            f"{_losses(fig)}; every job ended: {fig['settled']}; run {fig['run_s']} s",
            f"service healthy again: median {rec['median_s']} s, max {rec['max_s']} s",
        )
    if name == "nats_leader_kill":
        return (
            f"3-node NATS cluster, R3 streams; node {fig['killed']} (leader of"
            f" {', '.join(fig['streams_it_led'])}) killed -9 mid-run, {fig['links']} links",
            f"{_losses(fig)}; new leaders {sorted(set(fig['new_leaders'].values()))}",
            f"first artifact recorded after the kill: {fig['work_resumed_s']} s",
        )
    if name == "s3_outage":
        return (
            f"S3 stopped for {fig['down_s']} s mid-run, {fig['links']} links",
            f"{_losses(fig)}; artifacts recorded while down:"
            f" {fig['artifacts_recorded_while_down']};"
            f" succeeded without artifact: {fig['succeeded_without_artifact']}",
            f"settled {fig['catch_up_s']} s after S3 returned",
        )
    if name == "disk_full":
        return (
            f"disk under the database full ({fig['posts_while_full']} posts arrive meanwhile)",
            f"applied while full: {fig['applied_while_full']}; redelivered"
            f" {fig['redelivered_messages']:g}; lost {fig['lost']};"
            f" integrity_check {fig['integrity_check']}",
            f"all applied {fig['recovery_s']} s after space returned",
        )
    if name == "backup_restart":
        return (
            f"writer kill -9 during a backup ({fig['posts']} posts)",
            f"backup leftovers after restart: {fig['leftovers_after_restart']}; the next backup"
            f" restores {fig['restored_posts']} posts, integrity_check {fig['integrity_check']}",
            "next backup after restart",
        )
    if name == "clock_jump":
        return (
            f"clock jumps {' then '.join(fig['jumps'])}",
            f"jobs {fig['jobs']}; duplicated jobs {fig['duplicated_jobs']}",
            "(no waiting: the clock is an input)",
        )
    if name == "ssrf_check":
        kinds = ", ".join(f"{k} {v}" for k, v in fig["by_kind"].items())
        return (
            f"SSRF: {fig['cases']} target spellings through the target check ({kinds})",
            f"{fig['refused']} of {fig['cases']} refused",
            "",
        )
    if name == "ssrf_redirects":
        return (
            f"SSRF: a public page redirecting to each of {fig['cases']} private targets",
            f"{fig['refused']} refused by the check, {fig['location_rejected_by_httpx']} Location"
            f" headers rejected by httpx; connects to non-public addresses"
            f" {fig['connects_to_non_public']}, canary hits {fig['canary_hits']}",
            "",
        )
    if name in ("ssrf_rebinding", "ssrf_short_links"):
        what = "fetch" if name == "ssrf_rebinding" else "short-link resolution"
        return (
            f"SSRF: DNS answer changes between check and connect ({what})",
            f"connect went to the checked address; canary hits {fig['canary_hits']}",
            "",
        )
    if name == "ssrf_browser":
        return (
            f"SSRF: the browser's sub-requests through the archiver's egress proxy, each private"
            f" target as a GET and as a CONNECT ({fig['cases']} requests)",
            f"{fig['refused']} of {fig['cases']} refused and recorded",
            "",
        )
    if name.startswith("fuzz_"):
        return (
            f"atheris fuzzing of {name[5:]} for {fig['seconds']} s",
            f"{fig['done']}; corpus {fig['corpus']} inputs; {fig['crashes']} failing inputs",
            "",
        )
    return (name, json.dumps({k: v for k, v in fig.items() if k != "name"}), "")


def main(path: str) -> None:
    figures = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    lines = ["| fault | outcome | recovery |", "|---|---|---|"]
    lines += ["| " + " | ".join(row(f)) + " |" for f in figures]
    body = (
        "Real processes, real NATS, real SeaweedFS, a fixture forum on 127.0.0.1 linking to"
        " pages on 127.0.0.2, production defaults except the poll interval (1 s). Counts"
        " come from `CHAOS_*` variables (the `make test` run uses small ones).\n\n"
        + "\n".join(lines)
    )
    write_section(TITLE, COMMAND, body, doc=DOC)


if __name__ == "__main__":
    main(sys.argv[1])
