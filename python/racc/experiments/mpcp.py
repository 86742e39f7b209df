"""Seed 000 (MPCP): the parking lot of §4.1 (Fig. 2), the dumbbell of §4.2 (Fig. 3), the loss
sweep of §4.3 (Fig. 4) and the queue comparison of §5 (Fig. 5), for VCP, DPCP and TPCP."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib import ticker

from racc.experiments.base import Case, Claim, Experiment, port_summary, register, verdict
from racc.experiments.figures import panels, port_series, save, subplots
from racc.maxmin import from_resolved, link_shares, max_min

PROTOCOLS = {"vcp": ("vcp", "vcp"), "dpcp": ("dpcp", "dpcp"), "tpcp": ("tpcp", "tpcp"), "dcpew": ("dcpew", "dcpew")}


def protocol_overrides(protocol: str, flow_groups: int, links: list[str]) -> dict[str, Any]:
    """Every flow group and every listed router set to `protocol`'s sender and router module."""
    sender, router = PROTOCOLS[protocol]
    ov: dict[str, Any] = {f"flows.{i}.protocol": sender for i in range(flow_groups)}
    ov.update({f"{link}.router": router for link in links})
    return ov


def cases(scenario: str, protocols: list[str], flow_groups: int, links: list[str]) -> list[Case]:
    return [Case(p, scenario, protocol_overrides(p, flow_groups, links), requires=PROTOCOLS[p]) for p in protocols]


# --------------------------------------------------------------------------------------------
# mpcp-parking-lot (§4.1, Fig. 2)

PL_LINKS = [f"topology.links.{i}" for i in range(4)]
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
    resolved = res.resolved
    active = [i for i, f in enumerate(resolved["flows"]) if f["start"] * 1e-9 <= t]
    cap, paths, groups = from_resolved(resolved, active)
    port = next(p for p in range(len(resolved["links"]) * 2) if _port_name(resolved, p) == port_name)
    rates = max_min(cap, paths)
    agg = {"long" if g == "long" else "local" for g in groups.values()}
    s = link_shares(rates, paths, {f: ("long" if g == "long" else "local") for f, g in groups.items()}, port)
    return {a: s.get(a, 0.0) / cap[port] for a in agg}


def _port_name(resolved: Mapping, p: int) -> str:
    link = resolved["links"][p // 2]
    a, b = (link["a"], link["b"]) if p % 2 == 0 else (link["b"], link["a"])
    return f"{resolved['nodes'][a]['name']}->{resolved['nodes'][b]['name']}"


def l2_locals_start(res: Any) -> float:
    """When the L2 local aggregate starts in this run (1000 s in the paper, earlier with --quick)."""
    starts = res.flow_info.filter(pl.col("group") == "local-L2")["start_s"]
    return float(starts.min()) if starts.len() else L2_LOCALS_START


def paper_ideal(link: str, change: float) -> list[tuple[float, float, float]]:
    """The paper's "ideal" (§4.1 text), which treats each aggregate as one flow:
    (from time, long share, local share)."""
    # L1 and L3 carry the same aggregates as L0 at the same capacity, so the same ideal.
    shared = [(0.0, 0.5, 0.5), (change, 0.25, 0.75)]
    return {"L0": shared, "L1": shared, "L2": [(0.0, 1.0, 0.0), (change, 0.5, 0.5)], "L3": shared}[link]


def parking_lot_figures(
    results: Mapping[str, Any],
    out: Path,
    title: str = "Fig. 2: long vs local flows on each link (window averages)",
    filename: str = "fig2-parking-lot-shares.png",
) -> list[Path]:
    """One row per protocol, one column per link L0..L3 (the paper draws L0 and L2): the long and
    the local aggregate's share over time, the paper's ideal and the per-flow max-min share."""
    names = list(results)
    fig, axes = subplots(len(names), len(PL_PORTS), figsize=(20, 3.2 * len(names)), sharey=True, squeeze=False)
    for row, name in enumerate(names):
        res = results[name]
        end = float(res.links["time_s"].max())
        for col, link in enumerate(PL_PORTS):
            ax = axes[row][col]
            sh = group_shares(res, PL_PORTS[link], window_s=max(end / 150, 1.0))
            for agg, color in (("long", "C0"), ("local", "C1")):
                d = sh.filter(pl.col("agg") == agg)
                ax.plot(d["time_s"].to_list(), (d["share"] * 100).to_list(), color=color, lw=0.8, label=f"{agg} flows")
            ideal = paper_ideal(link, l2_locals_start(res))
            for i, (t0, long_ideal, local_ideal) in enumerate(ideal):
                t1 = ideal[i + 1][0] if i + 1 < len(ideal) else end
                ax.hlines(
                    [long_ideal * 100, local_ideal * 100],
                    t0,
                    t1,
                    colors=["C0", "C1"],
                    linestyles="--",
                    lw=0.9,
                    label="paper's ideal (aggregates)" if i == 0 else None,
                )
                mm = maxmin_split(res, PL_PORTS[link], (t0 + t1) / 2)
                ax.hlines(
                    [mm.get("long", 0) * 100, mm.get("local", 0) * 100],
                    t0,
                    t1,
                    colors=["C0", "C1"],
                    linestyles=":",
                    lw=1.4,
                    label="per-flow max-min" if i == 0 else None,
                )
            ax.set_title(f"{name.upper()} over link {link}")
            ax.set_xlabel("time (s)")
            ax.set_ylabel("share of link bandwidth (%)")
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(title)
    return [save(fig, out / filename)]


def mean_share(res: Any, link: str, t0: float, t1: float) -> dict[str, float]:
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


def parking_lot_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    """Seed 000 §4.1: VCP splits L0 about 15:1 for the locals and its L2 split does not move when
    the L2 locals start; DPCP splits fairly and follows the change. "Fair" is judged against the
    per-flow max-min shares (PROTOCOLS.md §15), within 10 points; the issue's comparative form
    (a protocol's long share closer to max-min than VCP's) is judged per phase."""
    out = []
    gaps: dict[str, tuple[float, float]] = {}  # distance of the L0 long share to max-min, per phase
    for name, res in results.items():
        ps = phase_shares(res)
        gaps[name] = ps.gaps
        ratio = ps.l0_local_after / max(ps.l0_long_after, 1e-9)
        if name == "vcp":  # the paper's claim for VCP is the bias itself
            out.append(
                Claim(
                    f"{name}: L0 local:long split",
                    "≈15:1",
                    f"{ratio:.1f}:1 (long {ps.l0_long_after:.0%})",
                    verdict(ratio >= 5),
                    "consistent: a bias of at least 5:1",
                )
            )
            out.append(
                Claim(
                    f"{name}: L2 long share when L2 locals start",
                    "does not move",
                    f"{ps.l2_long_before:.0%} → {ps.l2_long_after:.0%}",
                    verdict(abs(ps.l2_long_before - ps.l2_long_after) < 0.1),
                )
            )
        else:
            out.append(
                Claim(
                    f"{name}: L0 long share before L2 locals start",
                    f"fair (max-min {ps.maxmin_before:.0%})",
                    f"{ps.l0_long_before:.0%}",
                    verdict(abs(ps.l0_long_before - ps.maxmin_before) <= 0.1),
                    "within 10 points",
                )
            )
            out.append(
                Claim(
                    f"{name}: L0 long share after L2 locals start",
                    f"fair (max-min {ps.maxmin_after:.0%})",
                    f"{ps.l0_long_after:.0%}",
                    verdict(abs(ps.l0_long_after - ps.maxmin_after) <= 0.1),
                    "within 10 points",
                )
            )
            out.append(
                Claim(
                    f"{name}: L2 long share follows the L2 locals",
                    f"100 % → 50 % (paper's ideal); max-min → {ps.maxmin_l2:.0%}",
                    f"{ps.l2_long_before:.0%} → {ps.l2_long_after:.0%}",
                    verdict(ps.l2_long_before - ps.l2_long_after >= 0.15),
                )
            )
    if "vcp" in gaps:
        v = gaps["vcp"]
        for name, g in gaps.items():
            if name == "vcp":
                continue
            out.append(
                Claim(
                    f"{name}: L0 long share closer to max-min than VCP's",
                    "much closer (fair vs 15:1)",
                    f"{g[0]:.0%} vs {v[0]:.0%} off before, {g[1]:.0%} vs {v[1]:.0%} after the L2 locals start",
                    verdict(g[0] < v[0] and g[1] < v[1]),
                    "consistent: closer in both phases (how much closer is the fairness claims above)",
                )
            )
    return out


# --------------------------------------------------------------------------------------------
# mpcp-dumbbell (§4.2, Fig. 3) and mpcp-queue (§5, Fig. 5)

BOTTLENECK = "r0->r1"


def smoothed_utilisation(res: Any, window_s: float = 1.0) -> tuple[list[float], list[float]]:
    """Bottleneck utilisation averaged over `window_s` (a window sends in bursts once per RTT, so
    100 ms samples swing between 0 and 1 at a 500 ms RTT)."""
    t, u = port_series(res, BOTTLENECK, "utilisation")
    out_t, out_u, acc, n, edge = [], [], 0.0, 0, window_s
    for ti, ui in zip(t, u):
        acc, n = acc + ui, n + 1
        if ti >= edge - 1e-9:
            out_t.append(ti)
            out_u.append(acc / n)
            acc, n, edge = 0.0, 0, edge + window_s
    return out_t, out_u


def transition_time(res: Any, fraction: float = 0.9, window_s: float = 1.0) -> float | None:
    """First sample time t at which the utilisation averaged over (t − 1 s, t] reaches `fraction`
    of its steady level (the mean over the second half of the run). The paper does not define
    its "transition time"; this is our reading of Fig. 3 [reconstructed]. A sliding window read
    at every sample, not 1 s blocks, so the time has the samples' resolution (100 ms)."""
    t, u = port_series(res, BOTTLENECK, "utilisation")
    if not t:
        return None
    tail = [ui for ti, ui in zip(t, u) if ti > t[-1] / 2]
    steady = sum(tail) / len(tail)
    lo, acc = 0, 0.0
    for hi, (ti, ui) in enumerate(zip(t, u)):
        acc += ui
        while t[lo] <= ti - window_s + 1e-9:
            acc -= u[lo]
            lo += 1
        if ti >= window_s - 1e-9 and acc / (hi - lo + 1) >= fraction * steady:
            return ti
    return None


def dumbbell_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            results,
            out / "fig3-utilisation.png",
            "Fig. 3: bottleneck utilisation (1 s averages)",
            "utilisation",
            smoothed_utilisation,
            hline=0.9,
            hline_label="90 %",
        ),
    ]


def dumbbell_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    tt = {n: transition_time(r) for n, r in results.items()}
    for n in results:
        paper = {"vcp": "≈20 s", "dpcp": "< 4 s"}.get(n, "")
        t = tt[n]
        # "under 4 s" (the sliding 1 s mean read every 100 ms sample)
        ok = t is not None and (t <= 4.0 if n == "dpcp" else 10.0 <= t <= 30.0)
        out.append(
            Claim(
                f"{n}: transition time (to 90 % of steady utilisation)",
                paper,
                "never" if t is None else f"{t:.1f} s",
                verdict(ok),
            )
        )
    if "vcp" in results and "dpcp" in results:
        u = {n: port_summary(results[n], BOTTLENECK)["utilisation"] for n in ("vcp", "dpcp")}
        out.append(
            Claim(
                "DPCP utilisation higher than VCP's",
                "higher",
                f"{u['dpcp']:.1%} vs {u['vcp']:.1%}",
                verdict(u["dpcp"] > u["vcp"]),
            )
        )
    return out


def queue_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return [
        panels(
            results,
            out / "fig5-queue.png",
            "Fig. 5: bottleneck queue",
            "queue (packets)",
            lambda r: port_series(r, BOTTLENECK, "queue_pkts"),
        )
    ]


def queue_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    out = []
    q = {}
    for n, r in results.items():
        end = float(r.links["time_s"].max())
        _, ys = port_series(r, BOTTLENECK, "queue_pkts")
        t, _ = port_series(r, BOTTLENECK, "queue_pkts")
        tail = [y for ti, y in zip(t, ys) if ti > end / 2]
        q[n] = (sum(tail) / max(len(tail), 1), (pl.Series(tail).std() or 0.0))
    if "vcp" in q:
        for n in ("dpcp", "tpcp"):
            if n in q:
                ratio = q[n][0] / max(q["vcp"][0], 1e-9)
                out.append(
                    Claim(
                        f"{n} standing queue / VCP's",
                        "≈3x",
                        f"{ratio:.1f}x ({q[n][0]:.0f} vs {q['vcp'][0]:.0f} pkts)",
                        verdict(1.5 <= ratio <= 6),
                    )
                )
    if "dpcp" in q and "tpcp" in q:
        out.append(
            Claim(
                "TPCP's queue smoother than DPCP's (s.d.)",
                "smoother",
                f"{q['tpcp'][1]:.1f} vs {q['dpcp'][1]:.1f} pkts",
                verdict(q["tpcp"][1] < q["dpcp"][1]),
            )
        )
        out.append(
            Claim(
                "TPCP's standing queue slightly higher than DPCP's",
                "slightly higher",
                f"{q['tpcp'][0]:.0f} vs {q['dpcp'][0]:.0f} pkts",
                verdict(q["dpcp"][0] <= q["tpcp"][0] <= 1.5 * q["dpcp"][0]),
                "consistent: between 1x and 1.5x DPCP's",
            )
        )
    return out


register(
    Experiment(
        name="mpcp-parking-lot",
        source="seed 000 §4.1 (Fig. 2)",
        description="4-link parking lot (L2 at 2 Mb/s), 30 long + 4 x 10 local FTP flows, L2 locals from 1000 s: "
        "long/local split per link, VCP vs DPCP vs TPCP",
        cases=cases("mpcp-parking-lot.toml", ["vcp", "dpcp", "tpcp"], 5, PL_LINKS),
        quick={"duration": "300s", "flows.3.start": "100s"},
        figures=parking_lot_figures,
        claims=parking_lot_claims,
    )
)

register(
    Experiment(
        name="mpcp-dumbbell",
        source="seed 000 §4.2 (Fig. 3)",
        description="10 Mb/s, 500 ms RTT dumbbell: transition time and utilisation, VCP vs DPCP",
        cases=cases("mpcp-dumbbell.toml", ["vcp", "dpcp"], 1, ["topology.bottleneck"]),
        quick={"duration": "30s"},
        figures=dumbbell_figures,
        claims=dumbbell_claims,
    )
)

register(
    Experiment(
        name="mpcp-queue",
        source="seed 000 §5 (Fig. 5)",
        description="bottleneck queue of VCP, DPCP and TPCP on the mpcp-dumbbell set-up",
        cases=cases("mpcp-queue.toml", ["vcp", "dpcp", "tpcp"], 1, ["topology.bottleneck"]),
        quick={"duration": "30s"},
        figures=queue_figures,
        claims=queue_claims,
    )
)


# --------------------------------------------------------------------------------------------
# mpcp-loss-sweep (§4.3, Fig. 4)

LOSS_RATES = [0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50]
LOSS_KEY = "topology.bottleneck.loss.p"
#: Where the emulator drops packets. The paper (NIST Net on a Linux testbed) does not say; the
#: data direction hurts the TCP transport itself, the ACK direction only breaks MSP/LSP echo
#: pairs (the exceptions of §3.4 the experiment is named after). Both are run and reported.
LOSS_DIRECTIONS = {"data": "forward", "ack": "reverse"}


def loss_case_name(protocol: str, direction: str, rate: float) -> str:
    return f"{protocol}-{direction}-loss{rate:.2f}"


def parse_loss_case_name(name: str) -> tuple[str, str, float]:
    """The inverse of `loss_case_name`: (protocol, direction, loss rate)."""
    head, _, rate = name.partition("-loss")
    proto, _, direction = head.partition("-")
    return proto, direction, float(rate)


def loss_cases() -> list[Case]:
    out = []
    for direction, link_dir in LOSS_DIRECTIONS.items():
        for p in ("vcp", "dpcp"):
            ov = protocol_overrides(p, 1, ["topology.bottleneck"])
            ov["topology.bottleneck.loss_direction"] = link_dir
            for rate in LOSS_RATES:
                out.append(
                    Case(
                        loss_case_name(p, direction, rate),
                        "mpcp-loss-sweep.toml",
                        {**ov, LOSS_KEY: rate},
                        requires=PROTOCOLS[p],
                    )
                )
    return out


def fct_by_loss(results: Mapping[str, Any]) -> dict[tuple[str, str], list[tuple[float, float | None]]]:
    """Per (protocol, loss direction): (loss rate, FTP completion time or None if the transfer
    did not finish within the run)."""
    out: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
    for name, res in results.items():
        proto, direction, rate = parse_loss_case_name(name)
        fct = res.completions["fct_s"].to_list()
        out.setdefault((proto, direction), []).append((rate, fct[0] if fct else None))
    return {k: sorted(v) for k, v in out.items()}


def fallbacks_by_loss(results: Mapping[str, Any], protocol: str, direction: str) -> dict[float, int]:
    """Per loss rate: how often the sender fell back to VCP mode (seed 000 §3.4) in the run."""
    out = {}
    for name, res in results.items():
        proto, dirn, rate = parse_loss_case_name(name)
        if (proto, dirn) == (protocol, direction) and "vcp_fallbacks" in res.flows.columns:
            out[rate] = int(res.flows["vcp_fallbacks"].max() or 0)
    return dict(sorted(out.items()))


def loss_figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    curves = fct_by_loss(results)
    directions = [d for d in LOSS_DIRECTIONS if any(k[1] == d for k in curves)]
    fig, axes = subplots(1, len(directions), figsize=(6 * len(directions), 4), squeeze=False)
    for ax, direction in zip(axes[0], directions):
        mine = {proto: pts for (proto, d), pts in sorted(curves.items()) if d == direction}
        # Unfinished transfers are drawn above every finished one, one height per protocol so
        # that neither hides the other.
        top = 2 * max((f for pts in mine.values() for _, f in pts if f is not None), default=1.0)
        for i, (proto, pts) in enumerate(mine.items()):
            done = [(r * 100, f) for r, f in pts if f is not None]
            (line,) = ax.plot([x[0] for x in done], [x[1] for x in done], marker="o", label=proto.upper())
            lost = [r * 100 for r, f in pts if f is None]
            if lost:
                y = top * 1.4**i
                ax.plot(lost, [y] * len(lost), "x", color=line.get_color(), label=f"{proto.upper()}: not finished")
        ax.set_xlabel(f"packet loss rate on the {direction} path (%)")
        ax.set_ylabel("FTP completion time (s)")
        ax.set_yscale("log")
        # Plain seconds on the log axis (3, 10, 30 rather than 3x10^0).
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "25" else ""))
        ax.grid(alpha=0.3)
        ax.legend()
        ax.set_title(f"Fig. 4: 1 MB FTP completion time, {direction} loss")
    return [save(fig, out / "fig4-fct-vs-loss.png")]


def _fmt_fct(f: float | None) -> str:
    return "not finished" if f is None else f"{f:.1f} s"


def loss_claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    curves = fct_by_loss(results)
    out = []
    inf = float("inf")
    for direction in LOSS_DIRECTIONS:
        v, d = dict(curves.get(("vcp", direction), [])), dict(curves.get(("dpcp", direction), []))
        if v and d:
            rates = sorted(r for r in v if r in d)
            better = [r for r in rates if (d[r] or inf) <= (v[r] or inf)]
            worse = [f"{r:.0%} ({_fmt_fct(d[r])} vs {_fmt_fct(v[r])})" for r in rates if r not in better]
            measured = f"at {len(better)} of {len(rates)} rates" + (f"; not at {', '.join(worse)}" if worse else "")
            out.append(
                Claim(
                    f"{direction} loss: DPCP completes no later than VCP",
                    "at every loss rate",
                    measured,
                    verdict(len(better) == len(rates)),
                )
            )
        if d:
            base = d.get(0.0)
            low = {r: f for r, f in d.items() if r < 0.30}
            unfinished = [r for r, f in low.items() if f is None]
            if unfinished:
                measured, ok = f"not finished within the run at {min(unfinished):.0%} loss and above", False
            else:
                worst = max(low.values()) / base if base else inf
                measured, ok = f"worst FCT below 30 %: {worst:.1f}x the loss-free one", worst < 3.0
            out.append(
                Claim(
                    f"{direction} loss: DPCP little affected below 30 %",
                    "little affected",
                    measured,
                    verdict(ok),
                    "consistent: under 3x the loss-free FCT",
                )
            )
            high = [d[r] for r in d if r >= 0.35]
            mid = [d[r] for r in d if 0.2 <= r < 0.3]
            if high and mid and all(m is not None for m in mid):
                worst_high = max((x if x is not None else inf) for x in high)
                jump = worst_high / max(mid)
                out.append(
                    Claim(
                        f"{direction} loss: DPCP degrades past 35 %",
                        "degrades",
                        "not finished" if jump == inf else f"{jump:.1f}x the 20-30 % FCT",
                        verdict(jump > 2.0),
                        "consistent: over 2x the worst 20-30 % FCT",
                    )
                )
        fb = fallbacks_by_loss(results, "dpcp", direction)
        if fb:
            # §4.3: DPCP "will downgrade to VCP when the link is identified as a lossy link",
            # which it gives as the reason for the degradation past 35 %, and not below 30 %.
            first = min((r for r, n in fb.items() if n), default=None)
            high = [r for r in fb if r >= 0.35]
            ok = all(n == 0 for r, n in fb.items() if r < 0.30) and bool(high) and all(fb[r] > 0 for r in high)
            out.append(
                Claim(
                    f"{direction} loss: DPCP falls back to VCP mode only at high loss",
                    "past 35 %",
                    ("never" if first is None else f"from {first:.0%} on")
                    + "; fallbacks per rate: "
                    + ", ".join(f"{r:.0%} {n}" for r, n in fb.items()),
                    verdict(ok),
                    "consistent: none below 30 %, at least one at every rate from 35 %",
                )
            )
    return out


register(
    Experiment(
        name="mpcp-loss-sweep",
        source="seed 000 §4.3 (Fig. 4)",
        description="one 1 MB FTP transfer over the mpcp-dumbbell testbed with 0-50 % uniform loss on the data or the ACK path, VCP vs DPCP",
        cases=loss_cases(),
        quick={"duration": "120s"},
        figures=loss_figures,
        claims=loss_claims,
    )
)
