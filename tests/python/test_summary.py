"""Metrics: Jain's index, its window and flow eligibility, FCT statistics, aggregate goodput."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from racc import summary as sm
from racc.results import frame


def test_jain_equal_is_one():
    assert sm.jain([5.0] * 7) == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 3, 10, 100])
def test_jain_one_hog_is_one_over_n(n):
    assert sm.jain([1.0] + [0.0] * (n - 1)) == pytest.approx(1 / n)


def test_jain_hand_example():
    # (1+2+3)^2 / (3 * (1+4+9)) = 36/42
    assert sm.jain([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_degenerate():
    assert math.isnan(sm.jain([]))
    assert math.isnan(sm.jain([0, 0]))


@given(st.lists(st.floats(min_value=0, max_value=1e12), min_size=1, max_size=50))
def test_jain_bounds(xs):
    j = sm.jain(xs)
    if not math.isnan(j):
        assert 1 / len(xs) - 1e-9 <= j <= 1 + 1e-9


def _flows(rates, dt=1.0, end=10.0, missing=()):
    rows = {"time_s": [], "flow": [], "goodput_bps": []}
    for k in range(int(end / dt)):
        t = (k + 1) * dt
        for f, r in enumerate(rates):
            if (f, t) in missing:
                continue
            rows["time_s"].append(t)
            rows["flow"].append(f)
            rows["goodput_bps"].append(float(r(t) if callable(r) else r))
    return frame("flows", rows)


def _info(starts, stops=None, sizes=None):
    n = len(starts)
    return frame(
        "flow_info",
        {
            "flow": list(range(n)),
            "protocol": ["reno"] * n,
            "src": ["a"] * n,
            "dst": ["b"] * n,
            "group": ["g"] * n,
            "start_s": [float(s) for s in starts],
            "stop_s": stops or [math.nan] * n,
            "size_bytes": sizes or [0] * n,
            "rtt_prop_s": [0.1] * n,
        },
    )


EMPTY_COMP = frame("completions", {})


def test_fairness_window_excludes_startup():
    # flow 1 is slow only in the first half: excluded by the default window
    flows = _flows([1e6, lambda t: 1e5 if t <= 5 else 1e6])
    f = sm.fairness(flows, _info([0, 0]), EMPTY_COMP, end_s=10.0)
    assert f["window_s"] == [5.0, 10.0]
    assert f["flows"] == 2 and f["jain"] == pytest.approx(1.0)
    whole = sm.fairness(flows, _info([0, 0]), EMPTY_COMP, end_s=10.0, window=(0.0, 10.0))
    assert whole["jain"] < 1.0


def test_fairness_only_flows_active_through_window():
    flows = _flows([1e6, 1e6, 3e6, 5e6])
    info = _info([0, 0, 6.0, 0], stops=[math.nan, math.nan, math.nan, 8.0])
    # flow 2 starts late, flow 3 stops early -> only 0 and 1 count
    f = sm.fairness(flows, info, EMPTY_COMP, end_s=10.0)
    assert f["flows"] == 2 and f["jain"] == pytest.approx(1.0)


def test_fairness_completed_flow_excluded_and_missing_rows_count_zero():
    flows = _flows([2e6, 2e6, 2e6], missing={(1, 9.0), (1, 10.0)})
    comp = frame("completions", {"flow": [2], "size_bytes": [10], "start_s": [0.0], "end_s": [7.0], "fct_s": [7.0]})
    f = sm.fairness(flows, _info([0, 0, 0], sizes=[0, 0, 10]), comp, end_s=10.0)
    assert f["flows"] == 2
    # flow 1 has 3 of 5 samples in the window -> 1.2 Mb/s; Jain(2, 1.2)
    assert f["goodput_bps"]["min"] == pytest.approx(1.2e6)
    assert f["jain"] == pytest.approx(sm.jain([2.0, 1.2]))


def test_fairness_no_active_flows():
    f = sm.fairness(_flows([1e6]), _info([9.0]), EMPTY_COMP, end_s=10.0)
    assert f["flows"] == 0 and f["jain"] is None


def test_jain_over_time_steps():
    flows = _flows([1e6, lambda t: 0.0 if t <= 2 else 1e6], dt=0.5, end=4.0)
    j = sm.jain_over_time(flows, _info([0, 0]), EMPTY_COMP, step_s=1.0)
    assert j.get_column("time_s").to_list() == [1.0, 2.0, 3.0, 4.0]
    assert j.get_column("jain").to_list() == pytest.approx([0.5, 0.5, 1.0, 1.0])


def test_fct_stats_hand_frame():
    comp = frame(
        "completions",
        {
            "flow": [0, 1, 2, 3, 4],
            "size_bytes": [1_000, 2_000, 20_000, 50_000, 2_000_000],
            "start_s": [0.0] * 5,
            "end_s": [0.1, 0.2, 0.3, 0.4, 2.0],
            "fct_s": [0.1, 0.2, 0.3, 0.4, 2.0],
        },
    )
    s = sm.fct_stats(comp)
    assert s["count"] == 5
    assert s["mean_s"] == pytest.approx(0.6)
    assert s["median_s"] == pytest.approx(0.3)
    # linear interpolation: position 0.95*4 = 3.8 -> 0.4 + 0.8*(2.0-0.4)
    assert s["p95_s"] == pytest.approx(1.68)
    assert s["p99_s"] == pytest.approx(0.4 + 0.96 * 1.6)
    bins = {(round(b["size_lo"]), round(b["size_hi"])): (b["count"], b["mean_fct_s"]) for b in s["by_size"]}
    assert bins == {
        (1_000, 10_000): (2, pytest.approx(0.15)),
        (10_000, 100_000): (2, pytest.approx(0.35)),
        (1_000_000, 10_000_000): (1, pytest.approx(2.0)),
    }


def test_fct_stats_empty():
    assert sm.fct_stats(EMPTY_COMP) == {"count": 0}


def test_aggregate_goodput_and_build():
    flows = _flows([1e6, 3e6])
    out = sm.build(
        {"sim_time_s": 10.0, "events": 1, "goodput_bytes": 5_000_000},
        links=frame("links", {}),
        flows=flows,
        completions=EMPTY_COMP,
        flow_info=_info([0, 0]),
    )
    assert out["events"] == 1
    assert out["flows"]["aggregate_goodput_bps"] == pytest.approx(4e6)
    assert out["flows"]["aggregate_goodput_window_bps"] == pytest.approx(4e6)
    assert out["flows"]["jain"] == pytest.approx(sm.jain([1, 3]))
    assert out["fct"] == {"count": 0}


def test_whole_run_goodput_comes_from_the_counter_not_the_samples():
    # One short flow: 1 Mb/s for the first 2 s of a 10 s run, then no rows at all. Averaging
    # the rows there are gave 1 Mb/s; the run delivered 250 kB, 200 kb/s over the run.
    flows = _flows([1e6], end=2.0)
    core = {"sim_time_s": 10.0, "goodput_bytes": 250_000, "sample_interval_s": 1.0}
    out = sm.build(core, links=frame("links", {}), flows=flows, completions=EMPTY_COMP, flow_info=_info([0]))
    assert out["flows"]["aggregate_goodput_bps"] == pytest.approx(2e5)
    # The window (last half) holds samples with no flow: they count, as zero.
    assert out["flows"]["aggregate_goodput_window_bps"] == pytest.approx(0.0)
    w = sm.aggregate_goodput(flows, 0.0, 4.0, 1.0, 10.0)
    assert w == pytest.approx(5e5)


def test_window_goodput_weighs_the_short_last_sample_by_its_length():
    # Samples at 1, 2, 3 and the run's end 3.5: over (1, 3.5] the rows at 2 and 3 hold 1 Mb
    # each and the one at 3.5 holds 2 Mb/s x 0.5 s, 3 Mb in 2.5 s.
    flows = frame("flows", {"time_s": [1.0, 2.0, 3.0, 3.5], "flow": [0] * 4, "goodput_bps": [1e6, 1e6, 1e6, 2e6]})
    assert sm.aggregate_goodput(flows, 1.0, 3.5, 1.0, 3.5) == pytest.approx(3e6 / 2.5)
    assert sm.aggregate_goodput(flows, 0.5, 3.2, 1.0, 3.5) == pytest.approx(1e6)
    assert sm.aggregate_goodput(flows, 3.1, 3.4, 1.0, 3.5) is None


def test_sample_interval():
    assert sm.sample_interval([0.1, 0.2, 0.3]) == pytest.approx(0.1)
    assert sm.sample_interval([0.5]) == 0.5
    assert math.isnan(sm.sample_interval([]))


def test_goodput_from_engine_bytes_when_no_series():
    out = sm.build(
        {"sim_time_s": 10.0, "goodput_bytes": 1_250_000},
        links=frame("links", {}),
        flows=frame("flows", {}),
        completions=EMPTY_COMP,
        flow_info=_info([0]),
    )
    assert out["flows"]["aggregate_goodput_bps"] == pytest.approx(1e6)
    assert out["flows"]["jain"] is None and out["flows"]["series_recorded"] is False
