"""The overload budget: what it drops, what it never drops, and how its probe reacts."""

from hypothesis import given, strategies as st
import pytest
from transmission_bridge.ros import input_budget
from transmission_bridge.ros.input_budget import InputBudget

# A simulated executor: a clock the test advances by what each event costs.
BURST = 0.02


class Clock:
    """Seconds, advanced by hand."""

    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


def _budget(share, clock, cpu=None, **kwargs):
    """Return a budget on ``clock`` whose thread CPU time is ``cpu`` (idle unless advanced)."""
    return InputBudget(share, clock=clock, cpu_clock=cpu or Clock(0.0), **kwargs)


def _run(budget, clock, n, cost, gap, drop_cost=0.0, cpu=None):
    """
    Offer ``n`` messages ``gap`` s apart; handling takes ``cost`` s, dropping ``drop_cost``.

    With ``cpu`` (the thread's clock), handling is time this thread runs as well.
    """
    handled_time = 0.0

    def handle_one():           # wrap() charges what the callback took: it advances the clock
        clock.t += cost
        if cpu is not None:
            cpu.t += cost
    handle = budget.wrap(handle_one)
    for _ in range(n):
        before = budget.dropped
        start = clock.t
        handle()
        if budget.dropped == before:
            handled_time += clock.t - start
        else:
            clock.t += drop_cost
        clock.t += gap
    return handled_time


@given(share=st.floats(0.05, 1.0), load=st.floats(0.01, 0.95), cost=st.floats(1e-5, 5e-3))
def test_a_node_below_its_share_never_drops(share, load, cost):
    # Messages costing `cost` every cost / (load * share) seconds: load * share < share.
    clock = Clock()
    budget = _budget(share, clock, burst=BURST)
    _run(budget, clock, 2000, cost, cost / (load * share) - cost)
    assert budget.dropped == 0


@given(cost=st.floats(1e-4, 5e-3))
def test_share_one_never_drops_even_back_to_back(cost):
    clock = Clock()
    budget = _budget(1.0, clock, burst=BURST)
    _run(budget, clock, 2000, cost, 0.0)
    assert budget.dropped == 0


@pytest.mark.parametrize('share', [0.1, 0.3, 0.5, 0.9])
def test_overload_is_cut_to_the_share_of_wall_time(share):
    # Back to back (a queue of events), 0.8 ms per message, 20 us per drop.
    clock = Clock()
    budget = _budget(share, clock, burst=BURST)
    start = clock.t
    handled = _run(budget, clock, 50_000, 8e-4, 0.0, drop_cost=2e-5)
    elapsed = clock.t - start
    assert budget.dropped > 0
    # Over the run the handled time is the share of wall time, give or take one burst
    # of credit and one message at each end.
    assert handled == pytest.approx(share * elapsed, abs=2 * BURST + 2 * 8e-4)


@pytest.mark.parametrize('share', [0.1, 0.5])
def test_without_drops_every_message_is_handled_however_late(share):
    # The overload above, with drop_on_overload false: nothing dropped, every message
    # handled. The same load with drops (the default) is cut to the share.
    handled = {}
    for drops in (True, False):
        clock, cpu = Clock(), Clock(0.0)
        budget = _budget(share, clock, cpu, burst=BURST, drops=drops)
        handled[drops] = _run(budget, clock, 5000, 8e-4, 0.0, cpu=cpu)
        if not drops:
            assert budget.dropped == 0
            assert handled[drops] == pytest.approx(5000 * 8e-4)
    assert handled[True] < 0.9 * handled[False]


def test_one_slow_message_costs_a_bounded_stretch_of_drops():
    clock = Clock()
    budget = _budget(0.5, clock, burst=BURST)
    _run(budget, clock, 1, 5.0, 0.0)                 # a 5 s stall inside one message
    t0 = clock.t
    _run(budget, clock, 10_000, 1e-4, 1e-4)          # then a 50 % load, well within the share
    # The credit stopped at -BURST: dropping lasts at most BURST / share, 1e-4 s per drop.
    assert 0 < budget.dropped <= BURST / 0.5 / 1e-4 + 1
    assert clock.t > t0


def _probes(budget, clock, lateness, cpu=None, busy=0.0):
    """Probe after each of ``lateness``; the thread ran ``busy`` of each interval."""
    for late in lateness:
        interval = input_budget.PROBE_PERIOD + late
        clock.t += interval
        if cpu is not None:
            cpu.t += busy * interval
        budget.probe()


def test_probe_late_once_shrinks_a_little_and_late_again_halves():
    clock = Clock()
    budget = _budget(1.0, clock)
    _probes(budget, clock, [0.0, 0.0])
    assert budget.share == 1.0
    _probes(budget, clock, [0.3])                    # a pause of the whole process, or a queue
    assert budget.share == pytest.approx(0.75)
    _probes(budget, clock, [0.03])                   # still late: a queue
    assert budget.share == pytest.approx(0.375)
    _probes(budget, clock, [0.2])                    # far behind: cut in proportion
    assert 5 * input_budget.PROBE_PERIOD / 0.2 < 0.5
    assert budget.share == pytest.approx(0.375 * 5 * input_budget.PROBE_PERIOD / 0.2)
    _probes(budget, clock, [5.0] * 20)
    assert budget.share == input_budget.MIN_SHARE


def test_probe_late_once_with_the_thread_busy_is_a_queue_at_once():
    clock, cpu = Clock(), Clock(0.0)
    budget = _budget(1.0, clock, cpu)
    _probes(budget, clock, [0.0], cpu, busy=1.0)
    assert budget.share == 1.0                       # busy but on time: keeping up
    _probes(budget, clock, [0.03], cpu, busy=0.95)
    assert budget.share == pytest.approx(0.5)
    _probes(budget, clock, [0.0], cpu, busy=0.95)
    _probes(budget, clock, [0.03], cpu, busy=0.5 * input_budget.BUSY)   # mostly idle: a stall
    assert budget.share == pytest.approx(0.75 * (0.5 + input_budget.STEP))


def test_probe_on_time_restores_the_share_up_to_the_parameter():
    clock = Clock()
    budget = _budget(0.6, clock)
    _probes(budget, clock, [0.0, 1.0, 1.0, 1.0])
    low = budget.share
    assert low < 0.1
    _probes(budget, clock, [0.0])
    assert budget.share == pytest.approx(low + input_budget.STEP)
    _probes(budget, clock, [0.0] * 100)
    assert budget.share == 0.6
    # A late probe within LATE is on time.
    _probes(budget, clock, [0.9 * input_budget.LATE])
    assert budget.share == 0.6


def test_lowering_the_parameter_clamps_the_share_raising_it_lets_it_grow():
    clock = Clock()
    budget = _budget(1.0, clock)
    budget.max_share = 0.25
    assert budget.share == 0.25
    budget.max_share = 0.5
    assert budget.share == 0.25
    _probes(budget, clock, [0.0] * 20)
    assert budget.share == 0.5


@pytest.mark.parametrize('bad', [0.0, -0.5, 1.5, float('nan'), float('inf'), 1, True, '0.5'])
def test_invalid_shares_are_refused_by_value(bad):
    assert input_budget.share_error(bad) == f'must be a number in (0, 1], got {bad!r}'
    with pytest.raises(ValueError, match='share must be a number'):
        InputBudget(bad)
    budget = InputBudget(0.7)
    with pytest.raises(ValueError):
        budget.max_share = bad
    assert budget.max_share == 0.7 and budget.share == 0.7


class Timer:
    """The probe's timer as the node hands it over: what the budget made of it, in order."""

    def __init__(self):
        self.calls = []

    def reset(self):
        self.calls.append('start')

    def cancel(self):
        self.calls.append('stop')


def _on_demand(share=1.0):
    clock, cpu, timer = Clock(), Clock(0.0), Timer()
    budget = _budget(share, clock, cpu, burst=BURST)
    budget.on_demand(timer.reset, timer.cancel)
    return budget, clock, cpu, timer


def test_on_demand_probe_stops_when_quiet_and_a_busy_thread_starts_it():
    budget, clock, cpu, timer = _on_demand()
    _probes(budget, clock, [0.0] * input_budget.QUIET_PROBES, cpu, busy=0.1)
    assert budget.probing and timer.calls == []        # one probe short: still running
    _probes(budget, clock, [0.0], cpu, busy=0.1)
    assert not budget.probing and timer.calls == ['stop']
    # 1 kHz at 100 us a message: the thread runs 10 % of the time, below WAKE.
    _run(budget, clock, 2000, 1e-4, 9e-4, cpu=cpu)
    assert timer.calls == ['stop'] and budget.dropped == 0
    # Back to back: the thread runs all the time; the wrapper starts the probe within two
    # periods (one may be mostly the light load) and a message of the load's start.
    t0 = clock.t
    while not budget.probing:
        _run(budget, clock, 1, 1e-4, 0.0, cpu=cpu)
        assert clock.t - t0 <= 2 * input_budget.PROBE_PERIOD + 1e-4
    assert timer.calls == ['stop', 'start']
    # Its first tick is judged from the start: late by the queue, so it cuts the share.
    _run(budget, clock, 300, 1e-4, 0.0, cpu=cpu)
    budget.probe()
    assert budget.share == pytest.approx(0.5)


def test_on_demand_probe_keeps_running_while_late_busy_or_below_the_ceiling():
    budget, clock, cpu, timer = _on_demand()
    q = input_budget.QUIET_PROBES
    # Late now and then, the thread busy, or the share below its ceiling: never quiet for
    # QUIET_PROBES probes in a row.
    for _ in range(5):
        _probes(budget, clock, [0.0] * (q - 1) + [0.02], cpu, busy=0.1)
        _probes(budget, clock, [0.0] * 3 * q, cpu, busy=2 * input_budget.WAKE)
    _probes(budget, clock, [1.0], cpu, busy=0.1)
    _probes(budget, clock, [0.0] * 3, cpu, busy=0.1)
    assert budget.share < 1.0
    assert budget.probing and timer.calls == []
    _probes(budget, clock, [0.0] * 40, cpu, busy=0.1)     # back at the ceiling, then quiet
    assert budget.share == 1.0 and not budget.probing and timer.calls == ['stop']


def test_on_demand_probe_stopped_follows_the_parameter_up_and_down():
    budget, clock, cpu, timer = _on_demand(0.5)
    _probes(budget, clock, [0.0] * (input_budget.QUIET_PROBES + 1), cpu, busy=0.0)
    assert not budget.probing and budget.share == 0.5
    budget.max_share = 1.0              # the probe would have raised it: not left at 0.5
    assert budget.share == 1.0
    budget.max_share = 0.2
    assert budget.share == 0.2
    assert timer.calls == ['stop']


def test_without_on_demand_the_probe_never_stops():
    clock, cpu = Clock(), Clock(0.0)
    budget = _budget(1.0, clock, cpu)
    _probes(budget, clock, [0.0] * 10 * input_budget.QUIET_PROBES, cpu, busy=0.0)
    assert budget.probing
