"""Which clock judges a heartbeat or a lease (core.elapsed)."""

from __future__ import annotations

from core.clock import MonoStamp
from core.elapsed import SKEW_BOUND_US, Stamp, age, lease_state

HERE, ELSEWHERE = "boot:aaaa/time:[1]", "boot:bbbb/time:[1]"
S = 1_000_000


def test_a_stamp_of_this_clock_is_judged_by_the_monotonic_clock_whatever_the_wall_says() -> None:
    beat = Stamp(wall_us=1_000 * S, mono_us=50 * S, clock=HERE)
    # Wall stepped an hour forward (or a suspend's worth): 5 s by the monotonic clock.
    forward = age(beat, 1_000 * S + 3_600 * S, MonoStamp(55 * S, HERE))
    assert (forward.us, forward.by, forward.untrusted) == (5 * S, "monotonic", False)
    # Wall stepped two hours back: still 40 s of silence.
    back = age(beat, 1_000 * S - 7_200 * S, MonoStamp(90 * S, HERE))
    assert (back.us, back.by) == (40 * S, "monotonic")


def test_a_stamp_of_another_boot_or_host_is_judged_by_wall_time() -> None:
    beat = Stamp(wall_us=1_000 * S, mono_us=50 * S, clock=ELSEWHERE)
    judged = age(beat, 1_030 * S, MonoStamp(10 * S, HERE))
    assert (judged.us, judged.by, judged.untrusted) == (30 * S, "wall", False)
    no_mono = age(Stamp(wall_us=1_000 * S), 1_030 * S, MonoStamp(10 * S, HERE))
    assert (no_mono.us, no_mono.by) == (30 * S, "wall")
    without_ours = age(Stamp(1_000 * S, 50 * S, HERE), 1_030 * S, None)
    assert without_ours.by == "wall"


def test_a_wall_stamp_beyond_the_skew_bound_ahead_is_untrusted() -> None:
    within = age(Stamp(wall_us=1_000 * S + SKEW_BOUND_US), 1_000 * S, None)
    assert not within.untrusted
    beyond = age(Stamp(wall_us=1_000 * S + SKEW_BOUND_US + 1), 1_000 * S, None)
    assert beyond.untrusted


def test_a_lease_of_this_clock_ends_by_the_monotonic_clock() -> None:
    ends = Stamp(wall_us=9_000 * S, mono_us=60 * S, clock=HERE)  # set 2 h ahead
    assert lease_state(ends, 10 * S, 1_810 * S, MonoStamp(59 * S, HERE)) == "running"
    assert lease_state(ends, 10 * S, 1_810 * S, MonoStamp(60 * S, HERE)) == "expired"
    # Ahead by an hour on the wall, within its term by the monotonic clock: running.
    live = Stamp(wall_us=1_010 * S, mono_us=60 * S, clock=HERE)
    assert lease_state(live, 10 * S, 4_600 * S, MonoStamp(55 * S, HERE)) == "running"


def test_a_lease_of_another_host_ends_by_wall_time_and_is_untrusted_far_ahead() -> None:
    ends = Stamp(wall_us=1_010 * S, mono_us=60 * S, clock=ELSEWHERE)
    now = MonoStamp(1 * S, HERE)
    assert lease_state(ends, 10 * S, 1_009 * S, now) == "running"
    assert lease_state(ends, 10 * S, 1_010 * S, now) == "expired"
    far = Stamp(wall_us=1_000 * S + 10 * S + SKEW_BOUND_US + 1, clock=ELSEWHERE)
    assert lease_state(far, 10 * S, 1_000 * S, now) == "untrusted"
