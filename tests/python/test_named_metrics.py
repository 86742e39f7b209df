"""A protocol's own metrics reach the flows table and the results folder by the names and units
it reports them under, with no Python naming them: DPCP's chain counters beside NewReno flows,
which report none (nulls, not zeros)."""

import json

import polars as pl

SCENARIO = """
name = "mixed"
duration = "8s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "10Mbps", delay = "20ms", buffer = 60, router = "dpcp" }
[[flows]]
name = "dpcp"
protocol = "dpcp"
src = "s0"
dst = "d0"
[[flows]]
name = "tcp"
protocol = "newreno"
src = "s1"
dst = "d1"
[record]
interval = "500ms"
"""


def test_named_metrics_with_units_and_nulls(tmp_path):
    import racc

    res = racc.run(SCENARIO, out=tmp_path / "mixed")
    flows = res.flows.join(res.flow_info.select("flow", "protocol"), on="flow")
    for name in ("chain_exceptions", "vcp_fallbacks", "chain_resumes", "vcp_mode", "lsp_echoes"):
        assert name in flows.columns, name
        dpcp, tcp = (flows.filter(pl.col("protocol") == p)[name] for p in ("dpcp", "newreno"))
        assert dpcp.null_count() == 0 and tcp.null_count() == tcp.len() > 0, name
    assert flows.schema["vcp_mode"] == pl.Boolean
    # DPCP decodes LSPs through its own routers: with one ACK per packet and no exception, every
    # second acknowledged packet echoes an LSP (chains of 2); a clean path leaves it in chain mode.
    dpcp = flows.filter(pl.col("protocol") == "dpcp")
    last = dpcp.tail(1)
    acked_pkts = last["acked_bytes"][0] // 960  # 1000-byte packets less 40 bytes of headers
    assert last["chain_exceptions"][0] == 0 and not dpcp["vcp_mode"].any()
    assert acked_pkts > 100 and abs(last["lsp_echoes"][0] - acked_pkts / 2) <= 1, (last, acked_pkts)
    units = res.summary["flow_metric_units"]
    assert units["lsp_echoes"] == "packets" and units["vcp_mode"] == ""
    # The saved folder keeps them: Parquet with its nulls, units in summary.json.
    saved = pl.read_parquet(tmp_path / "mixed" / "flows.parquet")
    assert saved["lsp_echoes"].null_count() == tcp_rows(flows)
    assert json.loads((tmp_path / "mixed" / "summary.json").read_text())["flow_metric_units"] == units


def tcp_rows(flows: pl.DataFrame) -> int:
    return flows.filter(pl.col("protocol") == "newreno").height
