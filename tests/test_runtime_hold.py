"""The checked spin hold (runner.HeldTimer, runner.group_timer) on a fake runtime and clock."""

import pytest

from gemmmodel.runtime.measure import bench
from gemmmodel.runtime.runner import (HOLD_MARGIN, HOLD_MIN_S, HOLD_RETRIES, HOST_ENQUEUE_S,
                                      SHORT_KERNEL_S, HeldTimer, group_timer, hold_for)


class HostClock:
    """perf_counter stand-in: each launch costs the host `launch_s`."""

    def __init__(self, launch_s):
        self.now, self.launch_s = 0.0, launch_s

    def __call__(self):
        return self.now


class FakeRuntime:
    """time_s(fn, hold_s): hold, fn(), events; a launch of `kernel_s` device seconds each."""

    def __init__(self, clock, kernel_s):
        self.clock, self.kernel_s = clock, kernel_s
        self.holds, self.launches = [], 0

    def launch(self):
        self.launches += 1
        self.clock.now += self.clock.launch_s

    def time_s(self, fn, hold_s=0.0):
        self.holds.append(hold_s)
        self.clock.now += 5e-6        # the hold's own launch
        before = self.launches
        fn()
        # behind a short hold the device waits for the host: events time the enqueue
        enqueue = (self.launches - before) * self.clock.launch_s
        return max(self.kernel_s * (self.launches - before), enqueue - hold_s)


def group(rt, n):
    def fn():
        for _ in range(n):
            rt.launch()
    return fn


def test_a_hold_that_covers_the_enqueue_is_kept():
    clock = HostClock(launch_s=10e-6)
    rt = FakeRuntime(clock, kernel_s=4e-6)
    timer = HeldTimer(rt, hold_s=1e-3, clock=clock)
    assert timer(group(rt, 50)) == pytest.approx(50 * 4e-6)   # enqueue 0.505 ms <= 0.8 ms
    assert rt.holds == [1e-3]
    assert timer.stats() == {"hold_s": 1e-3, "hold_retimed": 0, "host_bound": 0,
                             "max_enqueue_s": pytest.approx(505e-6)}


def test_an_enqueue_past_the_hold_is_timed_again_behind_a_longer_one():
    """Run AJ's case: 50 batched launches of ~4 us that the host takes ~60 us each to
    enqueue, behind hold_for(50) = 1.53 ms."""
    clock = HostClock(launch_s=60e-6)
    rt = FakeRuntime(clock, kernel_s=4e-6)
    timer = HeldTimer(rt, hold_s=hold_for(50), clock=clock)
    t = timer(group(rt, 50))
    assert t == pytest.approx(50 * 4e-6)                       # the device's time, not 3 ms
    enqueue = 5e-6 + 50 * 60e-6
    assert rt.holds == [pytest.approx(hold_for(50)), pytest.approx(2 * enqueue)]
    assert timer.retimed == 1 and timer.host_bound == 0
    # the longer hold stays: the next group is timed once
    timer(group(rt, 50))
    assert len(rt.holds) == 3 and rt.holds[2] == rt.holds[1]
    assert HOLD_MARGIN * rt.holds[1] >= enqueue


def test_a_host_that_never_keeps_up_is_counted_not_hidden():
    class Runaway(HostClock):
        def __call__(self):            # every reading jumps past any hold so far
            self.now += 10.0 * self.launch_s
            self.launch_s *= 10.0
            return self.now

    clock = Runaway(launch_s=1e-3)
    rt = FakeRuntime(clock, kernel_s=4e-6)
    timer = HeldTimer(rt, hold_s=1e-3, clock=clock)
    timer(group(rt, 2))
    assert len(rt.holds) == HOLD_RETRIES + 1
    assert timer.retimed == HOLD_RETRIES and timer.host_bound == 1
    assert all(b > a for a, b in zip(rt.holds, rt.holds[1:]))


def test_group_timer_plans_inner_and_the_starting_hold():
    clock = HostClock(launch_s=10e-6)
    rt = FakeRuntime(clock, kernel_s=3.8e-6)
    inner, timer = group_timer(rt, rt.launch, clock=clock)
    assert inner == 53 and 52 < SHORT_KERNEL_S * 4 / 3.8e-6 < 53   # a group of >= 200 us
    assert timer.hold_s == hold_for(53) == pytest.approx(HOLD_MIN_S * 1.62)
    assert rt.holds == [HOST_ENQUEUE_S * 4] * 3                 # the three estimates
    # a long kernel: one launch per group, the minimum hold
    rt = FakeRuntime(HostClock(launch_s=10e-6), kernel_s=2e-4)
    assert group_timer(rt, rt.launch, tries=2)[0] == 1 and len(rt.holds) == 2
    # a time already taken counts in the estimate; max_inner caps the group
    rt = FakeRuntime(HostClock(launch_s=10e-6), kernel_s=1e-3)
    assert group_timer(rt, rt.launch, first_s=1e-6, max_inner=16)[0] == 16


def test_bench_keeps_the_timers_hold_stats():
    clock = HostClock(launch_s=60e-6)
    rt = FakeRuntime(clock, kernel_s=4e-6)
    inner, timer = group_timer(rt, rt.launch, clock=clock)
    res = bench(lambda i: rt.launch(), timer=timer, inner=inner, budget_s=1.0, min_reps=5,
                warmup=2, clock=clock)
    assert res.median_s == pytest.approx(4e-6)
    assert res.hold["hold_retimed"] == 1 and res.hold["host_bound"] == 0
    assert res.hold["hold_s"] > hold_for(inner) and res.to_dict()["hold"] == res.hold
    # a plain timer leaves hold empty
    plain = bench(lambda i: None, timer=lambda fn: (fn(), 1e-5)[1], min_reps=3, warmup=0)
    assert plain.hold == {}
