"""The baselines cross-check's own arithmetic (issue 41 item 2), runnable anywhere: case names,
the scenario every engine gets, the measures computed from samples, the agreement bounds.
The runs against Linux and ns-3 are tests/python/test_crosscheck_linux.py and
test_crosscheck_ns3.py."""

from __future__ import annotations

import math

import pytest
import tomllib
from racc.crosscheck import baselines, baselines_run, linux_kernel
from racc.crosscheck.baselines_measure import MSS, Series, measure, probe_rtt_entries


def test_case_names_parse_back():
    for case in baselines.matrix() + baselines.quick():
        back = baselines.parse(f"{case.name}@{case.duration_s:g}")
        assert back == case, case.name
    c = baselines.parse("bbr-100M-20-200ms-10f")
    assert c.rtts_ms[0] == 20 and c.rtts_ms[-1] == 200 and c.flows == 10
    with pytest.raises(ValueError, match="case 'reno-10M-20ms-1f'"):
        baselines.parse("reno-10M-20ms-1f")


def test_scenario_round_trip_and_delays():
    """The TOML the kernel runtime gets is the scenario racc runs; each flow's RTT is twice its
    access delay (the bottleneck and the receivers' links have none)."""
    case = baselines.Case("dctcp", 10.0, (20.0, 80.0), 20.0)
    data = case.scenario(seed=2)
    assert tomllib.loads(linux_kernel.scenario_toml(data)) == data
    assert [float(d.removesuffix("ms")) * 2 for d in data["topology"]["access_delays"]] == [20.0, 80.0]
    # BDP of the mean RTT (50 ms at 10 Mb/s, 1500 B): 41.7 -> 42 packets; K = max(42/7, 5) = 6.
    assert case.buffer_pkts == 42 and case.k_pkts == 6
    assert data["topology"]["bottleneck"]["router_params"] == {"k_pkts": 6}
    assert case.starts(2) == case.starts(2) != case.starts(3)


def test_probe_rtt_entries_count_dips_after_start_up():
    hi, lo = 50 * MSS, 4 * MSS
    cw = [(0.5, lo), (1.0, hi), (2.0, lo), (2.2, lo), (3.0, hi), (4.0, lo), (5.0, hi)]
    assert probe_rtt_entries(cw, after_s=0.0) == 2
    assert probe_rtt_entries(cw, after_s=3.5) == 1


def test_measure_from_samples():
    """Two flows at 6 and 2 Mb/s over a 10 Mb/s link: goodput 0.8, Jain (8^2)/(2*(36+4)) = 0.8."""
    case = baselines.Case("cubic", 10.0, (20.0, 20.0), 30.0)
    t = [float(x) for x in range(31)]
    time_s, flow, delivered, retrans = [], [], [], []
    for f, rate in ((0, 6e6), (1, 2e6)):
        for x in t:
            time_s.append(x)
            flow.append(f)
            delivered.append(rate / 8 * x)
            retrans.append(x if f == 0 else 0.0)  # flow 0 retransmits one segment a second
    s = Series(time_s, flow, delivered, [10 * MSS] * len(t) * 2, [0.0] * len(t) * 2, retrans, t, [5.0] * 31, 7)
    m = measure(case, 1, s)
    assert m.goodput == pytest.approx(0.8)
    assert m.jain == pytest.approx(0.8)
    assert m.queue_pkts == pytest.approx(5.0)
    delivered_pkts = 8e6 / 8 * 20 / MSS
    assert m.retrans_per_k == pytest.approx(1000 * 20 / delivered_pkts)
    assert math.isnan(m.pacing) and math.isnan(m.probe_rtt)


def test_bounds_as_stated():
    case = baselines.Case("cubic", 10.0, (20.0,), 20.0)  # buffer 17 packets
    assert baselines_run.agrees(case, "goodput", [0.90], [0.94, 0.96])
    assert not baselines_run.agrees(case, "goodput", [0.80], [0.94, 0.96])
    assert baselines_run.agrees(case, "goodput", [0.80], [0.70, 0.95])  # the reference's own range
    assert baselines_run.agrees(case, "queue_pkts", [8.0], [11.0])  # 0.2 x 17 = 3.4
    assert not baselines_run.agrees(case, "queue_pkts", [6.0], [11.0])
    assert baselines_run.agrees(case, "retrans_per_k", [1.0], [0.1])  # both under 2
    assert baselines_run.agrees(case, "retrans_per_k", [9.0], [3.1])
    assert not baselines_run.agrees(case, "retrans_per_k", [10.0], [3.0])
    assert baselines_run.agrees(case, "goodput", [], [0.9]) is None


def test_racc_bbr_four_flows_at_20_to_80_ms_finishes():
    """Four BBR flows, RTTs 20-80 ms, a 42-packet buffer, 8 s: racc used to reach 3.8 s and then
    spin, a sender's pacing wake-up due at the same instant for ever in a SACK recovery whose
    pipe was full (docs/CROSSCHECK-BASELINES.md, difference 1; fixed in the TCP sender, and the
    engine now stops such a spin with an error). It finishes within the child's time limit."""
    case = baselines.parse("bbr-10M-20-80ms-4f@8")
    baselines_run.racc_series(case, 1, timeout_s=30)


def test_the_command_refuses_in_one_line(capsys):
    from racc.cli import main

    assert main(["crosscheck", "ns3", "reno-10M-20ms-1f"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: case 'reno-10M-20ms-1f'")
    assert main(["crosscheck", "linux", "quick", "--set", "duration=1s"]) == 2
    assert "--set and --window do not apply" in capsys.readouterr().err
    assert main(["crosscheck", "ns2"]) == 2  # ns-2 still needs its scenario
    assert "give a SCENARIO" in capsys.readouterr().err


def test_saved_rows_read_back():
    case = baselines.Case("bbr", 10.0, (20.0,), 20.0)
    row = baselines_run.Row(case, {"racc": [baselines_run.Measure(0.9, 1.0, 4.0, 0.0, 0.0, 0.99, 1.0)]}, {"linux": "x"})
    back = baselines_run.rows_from_json(baselines_run.to_json([row]))[0]
    assert back.case == case and back.runs == row.runs and back.missing == row.missing
    assert "| bbr-10M-20ms-1f | pacing | 0.990 |" in baselines_run.table([back], ["racc", "linux"])
