"""The worker's slot accounting (pure, with a hand-moved clock)."""

from __future__ import annotations

import pytest

from shared.capture.slots import SlotPolicy, Slots, host_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def slots(concurrency: int = 2, long_after_s: float = 20, max_long: int = 2) -> tuple[Slots, Clock]:
    clock = Clock()
    return Slots(SlotPolicy(concurrency, long_after_s, max_long), clock), clock


def test_jobs_hold_slots_until_they_turn_long() -> None:
    s, clock = slots()
    s.start("a", "bad.example")
    s.start("b", "good.example")
    assert s.free() == 0 and s.next_change() == 20
    clock.now += 5
    assert s.free() == 0 and s.next_change() == 15
    clock.now += 15
    assert s.long_jobs() == 2 and s.free() == 2, "both long: set aside, their slots free"
    s.start("c", "good.example")
    s.start("d", "good.example")
    assert s.free() == 0, "two long set aside (max_long) + two in the slots"
    clock.now += 20
    assert s.long_jobs() == 4 and s.free() == 0, "past max_long, long jobs keep their slots"
    s.end("a")
    assert s.free() == 1


def test_a_host_with_a_long_job_is_stalled_until_it_ends() -> None:
    s, clock = slots()
    s.start("a", "bad.example")
    assert not s.stalled("bad.example"), "a job not long yet stalls nothing"
    clock.now += 20
    assert s.stalled("bad.example") and not s.stalled("good.example")
    s.end("a")
    assert not s.stalled("bad.example") and s.free() == 2


def test_off_means_every_job_keeps_its_slot() -> None:
    s, clock = slots(concurrency=1, long_after_s=0, max_long=2)
    s.start("a", "bad.example")
    clock.now += 10_000
    assert s.free() == 0 and s.long_jobs() == 0 and s.next_change() is None
    assert not s.stalled("bad.example")


def test_no_set_aside_still_stalls_the_host() -> None:
    s, clock = slots(concurrency=1, long_after_s=5, max_long=0)
    s.start("a", "bad.example")
    clock.now += 5
    assert s.free() == 0 and s.stalled("bad.example")


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://old.reddit.com/r/x", "reddit.com"),
        ("https://www.reddit.com/r/y", "reddit.com"),
        ("http://127.0.0.2:8080/p", "127.0.0.2"),
        ("https://[::1]:99/", "::1"),
        ("not a url", ""),
        ("http://[bad/", ""),
    ],
)
def test_host_is_the_registrable_domain(url: str, host: str) -> None:
    assert host_of(url) == host


def test_a_long_job_done_with_its_host_stalls_it_no_more() -> None:
    """A slow page's job told the writer it is done with the host (or reported itself done)
    and still uploads: the host's next job, which the writer may send at once, is not held
    back by it; the job still counts in the slots until it ends."""
    s, clock = slots(concurrency=1, long_after_s=20, max_long=0)
    s.start("a", "slow.example")
    clock.now += 30
    assert s.stalled("slow.example")
    s.release("a")
    assert not s.stalled("slow.example")
    assert s.free() == 0 and s.long_jobs() == 1, "it holds its slot until it ends"
    s.release("gone")  # a job already ended: nothing to do
    s.end("a")
    assert s.free() == 1


def test_a_job_reading_a_giant_page_after_its_host_gives_its_slot_up() -> None:
    """Done with its host after 3 s, a job spends seconds more reading the page's text (a
    page of tens of megabytes): a tenth of long_after_s after its release it is set aside like
    a long job, so another host's next job takes the slot; an ordinary job, whose work after
    the release takes well under that, keeps its slot to the end."""
    s, clock = slots(concurrency=2, long_after_s=20, max_long=2)
    s.start("giant", "bad.example")
    s.start("ordinary", "good.example")
    clock.now += 3
    s.release("giant")
    s.release("ordinary")
    assert s.next_change() == 2, "two seconds after their release"
    clock.now += 1
    s.end("ordinary")
    s.start("next", "good.example")
    assert s.free() == 0 and s.long_jobs() == 0
    assert s.next_change() == 1
    clock.now += 1
    assert s.long_jobs() == 1 and s.free() == 1, "set aside: its slot takes the next job"
    assert not s.stalled("bad.example"), "done with its host: stalls nothing"
    s.release("giant")  # a second release changes nothing
    assert s.next_change() == 19, "the next job turns long 20 s after its start"
    s.end("giant")
    assert s.free() == 1


def test_off_means_a_released_job_keeps_its_slot_too() -> None:
    s, clock = slots(concurrency=1, long_after_s=0, max_long=2)
    s.start("a", "bad.example")
    s.release("a")
    clock.now += 10_000
    assert s.free() == 0 and s.long_jobs() == 0 and s.next_change() is None
