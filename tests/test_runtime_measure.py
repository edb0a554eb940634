"""measure.bench / rotations_needed: pure logic with a fake timer, launcher and clock."""

import itertools
import math

import pytest

from gemmmodel.errors import BadArgument
from gemmmodel.runtime.measure import bench, rotations_needed, spread_of


class Fake:
    """A launcher + event timer + host clock. Each timed call returns the next duration."""

    def __init__(self, durations, host_step_s=0.01):
        self.durations = iter(durations)
        self.launched = []
        self.flushes = 0
        self.now = 0.0
        self.host_step_s = host_step_s

    def launch(self, index):
        self.launched.append(index)

    def timer(self, fn):
        fn()
        self.now += self.host_step_s
        return next(self.durations)

    def clock(self):
        return self.now

    def flush(self):
        self.flushes += 1


def test_constant_times_stop_at_min_reps_clean():
    fake = Fake(itertools.repeat(1e-3))
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=3, min_reps=7)
    assert res.reps == 7
    assert not res.noisy
    assert res.median_s == pytest.approx(1e-3)
    assert res.spread == pytest.approx(0.0)
    assert len(fake.launched) == 3 + 7


def test_noisy_times_run_until_budget_and_flag_noisy():
    # alternating 1.0 / 1.5 ms: p80/p20 - 1 = 0.5 never falls under 2 %
    fake = Fake(itertools.cycle([1e-3, 1.5e-3]), host_step_s=0.1)
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=0, min_reps=4,
                budget_s=1.0)
    assert res.noisy
    assert res.spread == pytest.approx(0.5)
    # the clock advances 0.1 s per sample: the budget of 1 s is spent after ~10 samples
    assert 10 <= res.reps <= 11
    assert res.p20_s == pytest.approx(1e-3)
    assert res.p80_s == pytest.approx(1.5e-3)


def test_max_reps_stops_a_noisy_run():
    fake = Fake(itertools.cycle([1e-3, 2e-3]), host_step_s=0.0)
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=0, min_reps=2,
                max_reps=25, budget_s=100.0)
    assert res.reps == 25 and res.noisy


def test_spread_settles_after_outliers():
    # two slow first samples, then a long steady run: the spread falls under 2 %
    fake = Fake(itertools.chain([5e-3, 4e-3], itertools.repeat(1e-3)))
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=0, min_reps=5)
    assert not res.noisy
    assert res.median_s == pytest.approx(1e-3)
    assert res.reps > 5  # needed more samples than min_reps to push the outliers past p80


def test_rotation_cycles_all_sets_in_warmup_and_timing():
    fake = Fake(itertools.repeat(1e-3))
    bench(fake.launch, timer=fake.timer, clock=fake.clock, n_rotations=4, min_reps=6)
    # default warm-up: one pass over the 4 sets + 2
    assert fake.launched[:6] == [0, 1, 2, 3, 0, 1]
    assert fake.launched[6:] == [2, 3, 0, 1, 2, 3]


def test_l2_flush_runs_once_per_timed_sample_only():
    fake = Fake(itertools.repeat(1e-3))
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=5, min_reps=8,
                l2_flush=fake.flush)
    assert fake.flushes == res.reps == 8


def test_inner_divides_the_event_time():
    fake = Fake(itertools.repeat(8e-6))
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, inner=8, warmup=1,
                min_reps=3, n_rotations=3)
    assert res.median_s == pytest.approx(1e-6)
    assert res.inner == 8
    assert len(fake.launched) == 8 * (1 + 3)
    assert fake.launched[:8] == [0, 1, 2, 0, 1, 2, 0, 1]


def test_slow_kernel_lowers_min_reps_to_the_budget_but_not_below_floor():
    fake = Fake(itertools.cycle([0.5, 0.6]), host_step_s=0.5)
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=1, min_reps=10,
                budget_s=1.0, min_reps_floor=3)
    assert res.reps == 3 and res.noisy


def test_bad_arguments():
    fake = Fake(itertools.repeat(1e-3))
    for kwargs in ({"n_rotations": 0}, {"min_reps": 0}, {"min_reps": 5, "max_reps": 4},
                   {"budget_s": 0.0}, {"inner": 0}):
        with pytest.raises(BadArgument):
            bench(fake.launch, timer=fake.timer, clock=fake.clock, **kwargs)


def test_spread_of_hand_values():
    # percentiles of 1..5: p20 = 1.8, p80 = 4.2
    assert spread_of([1, 2, 3, 4, 5]) == pytest.approx(4.2 / 1.8 - 1)
    assert math.isinf(spread_of([0.0, 0.0, 0.0, 0.0, 1.0]))  # p20 = 0


def test_rotations_needed_hand_values():
    l2 = 50 * 2**20
    per_set_1024 = 4 * 3 * 1024 * 1024          # A, B, C of 1024^3: 12 MiB
    # (n - 1) * 12 MiB >= 100 MiB  ->  n - 1 = 9
    assert rotations_needed(per_set_1024, l2) == 10
    per_set_4096 = 4 * 3 * 4096 * 4096          # 192 MiB: a second set suffices
    assert rotations_needed(per_set_4096, l2) == 2
    assert rotations_needed(per_set_1024, None) == 1
    assert rotations_needed(per_set_1024, l2, max_total_bytes=5 * per_set_1024) == 5
    assert rotations_needed(1000, l2, max_sets=64) == 64
    with pytest.raises(BadArgument):
        rotations_needed(0, l2)


def test_result_to_dict_drops_samples_unless_asked():
    fake = Fake(itertools.repeat(2e-3))
    res = bench(fake.launch, timer=fake.timer, clock=fake.clock, warmup=0, min_reps=3)
    assert "samples_s" not in res.to_dict()
    assert res.to_dict(samples=True)["samples_s"] == [2e-3] * 3
