"""Benchmark of shared.links: extraction + canonicalisation on real cooked posts (and how many
links the writer's default deletable policy archives).

Usage (from the repository root)::

    .venv/bin/python -m bench.bench_links [--seconds 5] [--no-docs]

Single process, one thread. The posts are the real Discourse posts of the corpora
(../shared/corpora/discourse/criticalfallibilism: the cooked HTML of every distinct post
of the JSON captures and the descriptions of the three RSS feeds), repeated until
``--seconds`` of work. The module-level caches (host normalisation, registrable domain,
tracking rules per host) are warm after the first pass, as in a long-running poller; the
first (cold) pass is reported separately. Whole URLs are never cached.

It also scores the library on the corpora (see testkit/link_scores.py) and writes both
into the "Link extraction and canonicalisation" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import replace_section
from shared.links.canonical import CanonicalUrl, canonicalize
from shared.links.link_extract import extract_links
from shared.links.occurrences import occurrences_for_post
from shared.links.policy import DomainPolicy
from testkit import link_scores as scores
from testkit.link_corpus import DISCOURSE, FORUM, json_posts, post_url, rss_items

SECTION = "## Link extraction and canonicalisation"
TARGET_POSTS_PER_S = 2000


def _archived(url: str) -> bool:
    """The writer's verdict under the default deletable policy."""
    c = canonicalize(url)
    return isinstance(c, CanonicalUrl) and DomainPolicy().decide(c)[0] == "archive"


ROUNDS = 3


def load_posts() -> list[tuple[str, str]]:
    posts = [(p["cooked"], post_url(p)) for p in json_posts().values()]
    posts += [(it["description"], it["link"]) for it in rss_items()]
    return posts


def timed_passes(
    fn: Callable[[str, str], object], posts: list[tuple[str, str]], seconds: float
) -> tuple[int, float]:
    """Run ``fn`` over every post until ``seconds`` have passed; (posts done, elapsed)."""
    done = 0
    start = time.perf_counter()
    while True:
        for html, url in posts:
            fn(html, url)
        done += len(posts)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done, elapsed


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of each timed loop")
    ap.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    if not DISCOURSE.is_dir():
        print(f"corpora not found at {DISCOURSE.resolve()}", file=sys.stderr)
        return 2

    posts = load_posts()
    hosts = [FORUM]

    def full(html: str, url: str) -> None:
        occurrences_for_post(html, url, forum_hosts=hosts)

    def extract_only(html: str, url: str) -> None:
        extract_links(html, url, forum_hosts=hosts)

    urls = [link.url for html, url in posts for link in extract_links(html, url, forum_hosts=hosts)]
    occ = [o for html, url in posts for o in occurrences_for_post(html, url, forum_hosts=hosts)]

    t0 = time.perf_counter()
    for html, url in posts:  # cold pass (first use of every host)
        full(html, url)
    cold = len(posts) / (time.perf_counter() - t0)

    rounds = [timed_passes(full, posts, args.seconds) for _ in range(ROUNDS)]
    n_full, t_full = max(rounds, key=lambda nt: nt[0] / nt[1])
    all_rates = sorted(n / t for n, t in rounds)
    n_ext, t_ext = timed_passes(extract_only, posts, args.seconds / 2)
    n_urls = 0
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < args.seconds / 2:
        for u in urls:
            canonicalize(u)
        n_urls += len(urls)
    t_urls = time.perf_counter() - t1
    canon_ok = sum(isinstance(canonicalize(u), CanonicalUrl) for u in urls)

    full_rate = n_full / t_full
    results = {
        "posts": len(posts),
        "links": len(urls),
        "occurrences": len(occ),
        "quote occurrences": sum(o.in_quote for o in occ),
        "archive decisions": sum(_archived(o.canonical_url) for o in occ),
        "full posts/s": full_rate,
        "full posts/s, worst round": all_rates[0],
        "cold posts/s": cold,
        "extract posts/s": n_ext / t_ext,
        "canonicalize urls/s": n_urls / t_urls,
    }
    score_lines = [fn().line() for fn in scores.ALL_SCORES]

    print(
        f"corpus: {len(posts)} posts, {len(urls)} links ({canon_ok} canonicalised), "
        f"{results['occurrences']} occurrences ({results['quote occurrences']} in quotes, "
        f"{results['archive decisions']} archive under the default deletable policy)"
    )
    print(
        f"full pipeline (extract + canonicalize): {full_rate:,.0f} posts/s "
        f"(best of {ROUNDS} rounds: {n_full:,} posts in {t_full:.1f}s; worst round "
        f"{all_rates[0]:,.0f}); cold first pass {cold:,.0f} posts/s"
    )
    print(
        f"extraction only: {results['extract posts/s']:,.0f} posts/s; "
        f"canonicalize only: {results['canonicalize urls/s']:,.0f} URLs/s"
    )
    verdict = "met" if full_rate >= TARGET_POSTS_PER_S else "NOT met"
    print(f"target >= {TARGET_POSTS_PER_S:,} posts/s: {verdict}")
    for line in score_lines:
        print("score:", line)

    if not args.no_docs:
        write_docs(args, results, n_full, t_full, score_lines)
    return 0


def write_docs(
    args: argparse.Namespace,
    r: dict[str, float],
    n_full: int,
    t_full: float,
    score_lines: list[str],
) -> None:
    command = ".venv/bin/python -m bench.bench_links"
    if args.seconds != 5.0:
        command += f" --seconds {args.seconds:g}"
    rows = [
        (
            "full pipeline (`occurrences_for_post`: extract + canonicalize)",
            f"**{r['full posts/s']:,.0f} posts/s** (best of {ROUNDS} rounds of "
            f"{args.seconds:g} s: {n_full:,} posts in {t_full:.1f} s; worst round "
            f"{r['full posts/s, worst round']:,.0f}; target ≥ {TARGET_POSTS_PER_S:,})",
        ),
        ("full pipeline, cold first pass", f"{r['cold posts/s']:,.0f} posts/s"),
        ("extraction only (`extract_links`)", f"{r['extract posts/s']:,.0f} posts/s"),
        ("`canonicalize` only", f"{r['canonicalize urls/s']:,.0f} URLs/s"),
        (
            "occurrences per pass",
            f"{r['occurrences']:.0f} ({r['quote occurrences']:.0f} in quotes; "
            f"{r['archive decisions']:.0f} `archive` under the default deletable policy)",
        ),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    body = (
        f"""{SECTION}

Command: `{command}` (run from the repository root; needs `../shared/corpora`).
Date: {dt.date.today().isoformat()}. Machine: {cpu_name()}, Python {platform.python_version()},
single process, one thread.

Input: {r["posts"]:.0f} real Discourse posts (cooked HTML of every distinct post in the
criticalfallibilism JSON captures, plus the descriptions of the three RSS feeds) with
{r["links"]:.0f} archive-target links, repeated for {args.seconds:g} s per round. Host-level
caches are warm after the first pass (as in the running poller); whole URLs are never
cached. The machine (2 cores) is shared with other work, so rounds vary; the worst round
is listed too.

| measure | result |
| --- | --- |
{table}

Correctness on the corpora (`testkit/link_scores.py`; the same numbers are asserted by
`tests/links/test_corpora.py`; what is skipped and why is in the docstrings there):

"""
        + "\n".join(f"- {line}" for line in score_lines)
        + "\n"
    )
    replace_section(SECTION.removeprefix("## "), body)


if __name__ == "__main__":
    raise SystemExit(main())
