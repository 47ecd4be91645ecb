"""The liveness verdict rule and the check schedule (pure: time is given, never waited for)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.writer.liveness.schedule import next_due, parse_schedule
from services.writer.liveness.verdict import Observation, Windows, verdict

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
W = Windows()
H = timedelta(hours=1)
D = timedelta(days=1)


def ob(hours: float, answer: str, *, tomb: bool = False, why: str | None = None) -> Observation:
    return Observation(T0 + hours * H, answer, tomb, why)  # type: ignore[arg-type]


def test_nothing_observed_is_unknown() -> None:
    assert verdict([], W).state == "unknown"


def test_a_single_404_is_not_gone_until_the_window_is_spanned() -> None:
    v = verdict([ob(0, "present"), ob(1, "gone", why="HTTP 404")], W)
    assert (v.state, v.confirming_until) == ("unknown", T0 + H + 3 * D)
    v = verdict([ob(0, "present"), ob(1, "gone", why="HTTP 404"), ob(60, "gone")], W)
    assert v.state == "unknown"
    obs = [ob(0, "present"), ob(1, "gone", why="HTTP 404"), ob(73, "gone", why="HTTP 410")]
    v = verdict(obs, W)
    assert (v.state, v.since, v.reason) == ("gone", T0 + H, "HTTP 410")


def test_a_tombstone_is_believed_after_its_shorter_window() -> None:
    obs = [ob(0, "present"), ob(1, "gone", tomb=True, why="removed by a moderator")]
    assert verdict(obs, W).state == "unknown"
    obs.append(ob(2, "gone", tomb=True, why="removed by a moderator"))
    v = verdict(obs, W)
    assert (v.state, v.reason, v.since) == ("gone", "removed by a moderator", T0 + H)


def test_a_flapping_page_is_never_gone_early() -> None:
    obs = [ob(0, "gone"), ob(40, "present"), ob(41, "gone"), ob(80, "present"), ob(81, "gone")]
    assert verdict(obs, W).state == "unknown"
    obs.append(ob(81 + 71, "gone"))  # 71 h after the last present: still short of 72
    assert verdict(obs, W).state == "unknown"
    obs.append(ob(81 + 72, "gone"))
    assert verdict(obs, W).state == "gone"


def test_a_week_of_429s_is_unknown_never_gone() -> None:
    obs = [ob(0, "present")] + [ob(h, "unknown", why="HTTP 429") for h in range(1, 24 * 7)]
    v = verdict(obs, W)
    assert (v.state, v.reason, v.since) == ("unknown", "HTTP 429", T0 + H)


def test_unknowns_neither_count_nor_break_a_gone_run() -> None:
    obs = [ob(0, "present"), ob(1, "gone"), ob(30, "unknown"), ob(74, "gone"), ob(80, "unknown")]
    v = verdict(obs, W)
    assert (v.state, v.since, v.last_checked_at) == ("gone", T0 + H, T0 + 80 * H)


def test_one_present_resets_a_confirmed_gone() -> None:
    obs = [ob(0, "gone", tomb=True), ob(2, "gone", tomb=True), ob(3, "present")]
    v = verdict(obs, W)
    assert (v.state, v.since) == ("present", T0 + 3 * H)


def test_present_since_the_last_time_it_came_back() -> None:
    obs = [ob(0, "present"), ob(1, "unknown"), ob(2, "present"), ob(3, "gone"), ob(4, "present")]
    assert verdict(obs, W).since == T0 + 4 * H
    assert verdict(obs[:3], W).since == T0


def test_order_of_input_does_not_matter() -> None:
    obs = [ob(0, "present"), ob(1, "gone", tomb=True), ob(3, "gone", tomb=True)]
    assert verdict(list(reversed(obs)), W) == verdict(obs, W)


def test_schedule_parses_units_and_refuses_nonsense() -> None:
    assert parse_schedule("90s, 30m,1h,1.5d") == (
        timedelta(seconds=90), timedelta(minutes=30), H, timedelta(hours=36)
    )  # fmt: skip
    for bad in ("", "1h,", "1w", "1d,1h", "0s", "h"):
        with pytest.raises(ValueError):
            parse_schedule(bad)


AGES = parse_schedule("1h,1d,7d,30d,90d")


def test_first_check_at_the_first_age_then_each_age_then_every_90_days() -> None:
    due = next_due(AGES, T0, None, link_id=0)
    assert due == T0 + H
    seen = []
    last = None
    for _ in range(8):
        due = next_due(AGES, T0, last, link_id=0)
        seen.append(due - T0)
        last = due
    assert seen == [H, D, 7 * D, 30 * D, 90 * D, 180 * D, 270 * D, 360 * D]


def test_an_outage_fires_one_overdue_check_not_every_missed_age() -> None:
    late = T0 + 10 * D  # last checked at 1 d, then down; checked again now, at 10 d
    assert next_due(AGES, T0, T0 + D + timedelta(minutes=5), link_id=0) == T0 + 7 * D
    assert next_due(AGES, T0, late, link_id=0) == T0 + 30 * D
    assert next_due(AGES, T0, T0 + 1000 * D, link_id=0) == T0 + 1080 * D


def test_links_archived_together_are_spread_by_their_jitter() -> None:
    dues = {next_due(AGES, T0, None, link_id=i) for i in range(1, 200)}
    assert len(dues) > 150
    assert all(T0 + H <= d < T0 + H * 1.05 for d in dues)
