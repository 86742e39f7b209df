"""The parking lot of MPCP §4.1 (Fig. 1(a)), as MPCP and DCP-EW measure it: the long and
the local aggregate's share of each link L0..L3, before and after the L2 locals start, next to
the per-flow max-min shares (docs/PROTOCOLS.md §15)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from racc.maxmin import from_results, link_shares, max_min

#: the scenario's links L0..L3, as override keys (`topology.links.2.router`)
PL_LINKS = [f"topology.links.{i}" for i in range(4)]
#: the port each link's flows cross, by the name the results give it (the parking-lot topology
#: names its routers r0..r4)
PL_PORTS = {"L0": "r0->r1", "L1": "r1->r2", "L2": "r2->r3", "L3": "r3->r4"}
L2_LOCALS_START = 1000.0


def group_shares(res: Any, port: str, window_s: float | None = None) -> pl.DataFrame:
    """Per sample (or per `window_s` window): the share of the port's capacity taken by the long
    and by the local aggregate."""
    g = res.group_links.filter(pl.col("name") == port)
    g = g.with_columns(pl.when(pl.col("group") == "long").then(pl.lit("long")).otherwise(pl.lit("local")).alias("agg"))
    per_sample = g.group_by(["time_s", "agg"]).agg(pl.col("share").sum())
    if window_s:
        per_sample = per_sample.with_columns(((pl.col("time_s") / window_s).ceil() * window_s).alias("time_s"))
        per_sample = per_sample.group_by(["time_s", "agg"]).agg(pl.col("share").mean())
    return per_sample.sort(["agg", "time_s"])


def maxmin_split(res: Any, port_name: str, t: float) -> dict[str, float]:
    """Per-flow max-min shares of `port_name` among the flows active at time t (fractions of C)."""
    active = [i for i, f in enumerate(res.resolved["flows"]) if f["start"] * 1e-9 <= t]
    cap, paths, groups = from_results(res, active)
    (port,) = res.port_info.filter(pl.col("name") == port_name).get_column("port").to_list()
    rates = max_min(cap, paths)
    agg = {"long" if g == "long" else "local" for g in groups.values()}
    s = link_shares(rates, paths, {f: ("long" if g == "long" else "local") for f, g in groups.items()}, port)
    return {a: s.get(a, 0.0) / cap[port] for a in agg}


def l2_locals_start(res: Any) -> float:
    """When the L2 local aggregate starts in this run (1000 s in the paper, earlier with --quick)."""
    starts = res.flow_info.filter(pl.col("group") == "local-L2")["start_s"]
    return float(starts.min()) if starts.len() else L2_LOCALS_START


def mean_share(res: Any, link: str, t0: float, t1: float) -> dict[str, float]:
    """The long and the local aggregate's mean share of `link` (L0..L3) over (t0, t1]."""
    sh = group_shares(res, PL_PORTS[link]).filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t1))
    return {r["agg"]: r["share"] for r in sh.group_by("agg").agg(pl.col("share").mean()).iter_rows(named=True)}


@dataclass(frozen=True)
class PhaseShares:
    """A parking-lot run's long-flow shares in the steady half of each phase (before / after the
    L2 locals start), next to the per-flow max-min shares, as fractions of capacity."""

    l0_long_before: float
    l0_long_after: float
    l0_local_after: float
    l2_long_before: float
    l2_long_after: float
    maxmin_before: float
    maxmin_after: float
    maxmin_l2: float

    @property
    def gaps(self) -> tuple[float, float]:
        """Distance of the L0 long share to max-min, before and after the change."""
        return abs(self.l0_long_before - self.maxmin_before), abs(self.l0_long_after - self.maxmin_after)


def phase_shares(res: Any) -> PhaseShares:
    end = float(res.links["time_s"].max())
    change = l2_locals_start(res)
    # Steady windows: the second half of each phase.
    before, after = (change / 2, change), ((change + end) / 2, end)
    l0_after = mean_share(res, "L0", *after)
    return PhaseShares(
        l0_long_before=mean_share(res, "L0", *before).get("long", 0.0),
        l0_long_after=l0_after.get("long", 0.0),
        l0_local_after=l0_after.get("local", 0.0),
        l2_long_before=mean_share(res, "L2", *before).get("long", 0.0),
        l2_long_after=mean_share(res, "L2", *after).get("long", 0.0),
        maxmin_before=maxmin_split(res, PL_PORTS["L0"], change / 2)["long"],
        maxmin_after=maxmin_split(res, PL_PORTS["L0"], end)["long"],
        maxmin_l2=maxmin_split(res, PL_PORTS["L2"], end)["long"],
    )


@dataclass(frozen=True)
class LinkStats:
    """One link's long and local aggregates over a window: share of capacity and goodput (the
    aggregate's receivers, bits/s, averaged over the window's samples), with the link's drops and
    the aggregates' retransmission timeouts over the whole run."""

    long_share: float
    local_share: float
    long_goodput_bps: float
    local_goodput_bps: float
    drops: int
    long_timeouts: int
    local_timeouts: int


def link_stats(res: Any, link: str, t0: float, t1: float) -> LinkStats:
    from racc.experiments.base import port_summary

    share = mean_share(res, link, t0, t1)
    groups = {"long": "long", f"local-{link}": "local"}
    info = res.flow_info.select("flow", pl.col("group").cast(pl.Utf8)).filter(pl.col("group").is_in(list(groups)))
    info = info.with_columns(pl.col("group").replace_strict(groups).alias("agg"))
    flows = res.flows.join(info, on="flow")
    win = flows.filter((pl.col("time_s") > t0) & (pl.col("time_s") <= t1))
    goodput = {
        r["agg"]: r["goodput_bps"]
        for r in win.group_by(["time_s", "agg"])
        .agg(pl.col("goodput_bps").sum())
        .group_by("agg")
        .agg(pl.col("goodput_bps").mean())
        .iter_rows(named=True)
    }
    timeouts = {
        r["agg"]: r["timeouts"]
        for r in flows.group_by(["flow", "agg"])
        .agg(pl.col("timeouts").max())
        .group_by("agg")
        .agg(pl.col("timeouts").sum())
        .iter_rows(named=True)
    }
    return LinkStats(
        long_share=share.get("long", 0.0),
        local_share=share.get("local", 0.0),
        long_goodput_bps=goodput.get("long", 0.0),
        local_goodput_bps=goodput.get("local", 0.0),
        drops=int(port_summary(res, PL_PORTS[link])["drops"]),
        long_timeouts=int(timeouts.get("long", 0)),
        local_timeouts=int(timeouts.get("local", 0)),
    )


def after_window(res: Any) -> tuple[float, float]:
    """The steady half of the phase after the L2 locals start (as :func:`phase_shares`)."""
    end = float(res.links["time_s"].max())
    return (l2_locals_start(res) + end) / 2, end
