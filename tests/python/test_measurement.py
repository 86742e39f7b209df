"""Figures that add up, on the real engine (issue 12, items 1-3): the summary's goodput comes
from the run's counters whether or not flow series are recorded, the flow series hold every
delivered byte, and no sampled utilisation exceeds the capacity."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import needs_core
from racc import summary as sm

pytestmark = needs_core

# Three finite flows that finish between samples, well before the end of the run: averaging
# the rows there are over the samples that have rows gave about 20 times the true figure.
SHORT = """
name = "short-flows"
duration = "10s"
seed = 2
packet_size = 1500
[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { capacity = "2Mbps", delay = "10ms", buffer = 20 }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 3
size = "100KB"
start_spread = "300ms"
[record]
interval = "20ms"
"""


def _run(flows: bool):
    import racc

    return racc.run(SHORT, overrides={"record.flows": flows})


def test_summary_goodput_does_not_depend_on_recording_flows():
    a, b = _run(True), _run(False)
    assert a.completions.height == 3 and b.flows.height == 0
    delivered = a.completions.get_column("size_bytes").sum()  # every receiver's bytes
    ga = a.summary["flows"]["aggregate_goodput_bps"]
    assert ga == b.summary["flows"]["aggregate_goodput_bps"]
    assert ga == pytest.approx(8.0 * delivered / 10.0, rel=1e-12)
    assert a.summary["goodput_bytes"] == delivered


def test_flow_series_hold_every_delivered_byte():
    a = _run(True)
    per_flow = a.flows.group_by("flow").agg((pl.col("goodput_bps") * sm.row_seconds(0.02)).sum() / 8.0)
    assert per_flow.height == 3
    for got in per_flow.get_column("goodput_bps").to_list():
        assert got == pytest.approx(100_000, rel=1e-9)


def test_sampled_utilisation_never_exceeds_capacity():
    a = _run(True)
    assert a.links.get_column("utilisation").max() <= 1.0 + 1e-9
    # The flows keep the bottleneck busy, and the whole packets counted in the samples still
    # exceed what the link can carry in some of them: this case straddles sample boundaries.
    bn = a.links.filter(pl.col("name") == "r0->r1")
    assert bn.get_column("utilisation").max() > 0.99
    assert (bn.get_column("tx_bytes") * 8 / 0.02 > 2e6 * (1 + 1e-9)).any()
