"""dcpew-parking-lot, DCP-EW §IV: the mpcp-parking-lot topology with 5 %
Gilbert–Elliott loss on every link, VCP vs DPCP vs DCP-EW. Judged by MPCP §4.1's claims
(mpcp-parking-lot's) and by utilisation, which the loss is there to test. Run under both AI
laws, as mpcp-parking-lot (the ns2 law's cases with router γ = 0.95; `ai_laws`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from racc.experiments import mpcp_parking_lot
from racc.experiments.ai_laws import LAW_NAMES, by_law, law_cases, ns2_overrides
from racc.experiments.base import Case, Cause, Claim, Experiment, explain, port_summary, register, verdict, within
from racc.experiments.causes import claim_named, other_configuration, shortfall
from racc.experiments.parking_lot import PL_LINKS, PL_PORTS, phase_shares
from racc.experiments.protocols import PROTOCOLS, protocol_overrides

#: Evidence cases (issue 35 item 4), DCP-EW under the ns2 law (the law whose loss-free split is
#: MPCP's Fig. 2): without the loss, and with a loss response that never cuts cwnd (the
#: `ew_loss_md = "none"` ablation, applied to RTOs too). They judge no claim of their own.
LOSSLESS = "dcpew-ns2-lossless"
NEVER_CUT = "dcpew-ns2-never-cut"
EVIDENCE = (LOSSLESS, NEVER_CUT)
FLOW_GROUPS = 5


def evidence_cases() -> list[Case]:
    base = {**protocol_overrides("dcpew", FLOW_GROUPS, PL_LINKS), **ns2_overrides(FLOW_GROUPS, PL_LINKS)}
    lossless = {f"{link}.loss.loss": 0.0 for link in PL_LINKS}
    never = {f"flows.{i}.params.ew_loss_md": "none" for i in range(FLOW_GROUPS)}
    never.update({f"flows.{i}.params.ew_apply_to_rto": True for i in range(FLOW_GROUPS)})
    return [
        Case(LOSSLESS, "dcpew-parking-lot.toml", {**base, **lossless}, requires=PROTOCOLS["dcpew"]),
        Case(NEVER_CUT, "dcpew-parking-lot.toml", {**base, **never}, requires=PROTOCOLS["dcpew"]),
    ]


def judged_cases(results: Mapping[str, Any]) -> dict[str, Any]:
    """The cases the paper's claims are judged on (the evidence cases left out)."""
    return {n: r for n, r in results.items() if n not in EVIDENCE}


def mean_utilisation(res: Any) -> float:
    """Mean utilisation of L0..L3 over the run."""
    return sum(port_summary(res, p)["utilisation"] for p in PL_PORTS.values()) / len(PL_PORTS)


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
    return mpcp_parking_lot.figures(
        judged_cases(results),
        out,
        title="DCP-EW Figs. 4-5: long vs local flows on each link under 5 % Gilbert-Elliott loss",
        filename="fig-dcpew-parking-lot-shares.png",
    )


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
    evidence = {n: results[n] for n in EVIDENCE if n in results}
    results = judged_cases(results)
    out = mpcp_parking_lot.claims(results, quick)
    u = {n: mean_utilisation(r) for n, r in results.items()}
    for n, v in u.items():
        out.append(Claim(f"{n}: mean utilisation of L0..L3 under 5 % loss", "", f"{v:.1%}", "measured"))
    for law, sub in by_law(dict(results)).items():
        out += efficiency_claim({p: mean_utilisation(r) for p, r in sub.items()}, law)
    for n, res in evidence.items():
        ps = phase_shares(res)
        out.append(
            Claim(
                f"{n}: L0 long share before / after L2 locals start; L2 long share",
                "",
                f"L0 {ps.l0_long_before:.0%} / {ps.l0_long_after:.0%} (max-min {ps.maxmin_before:.0%} / "
                f"{ps.maxmin_after:.0%}); L2 {ps.l2_long_before:.0%} → {ps.l2_long_after:.0%}",
                "measured",
                "evidence for the shares' cause (issue 35 item 4): "
                + ("no loss on any link" if n == LOSSLESS else "no loss ever cuts cwnd (ew_loss_md none, on RTOs too)"),
            )
        )
    out += recovery_claims(results)
    return out


def loss_recovery(res: Any) -> dict[str, dict[str, float]]:
    """Per aggregate ("long", "local"): per flow over the run, retransmission timeouts, fast
    retransmits, and (DCP-EW) the losses its bit map called error and congestion and the loss MDs."""
    cols = [
        c
        for c in ("timeouts", "fast_retransmits", "error_losses", "congestion_losses", "loss_mds")
        if c in res.flows.columns
    ]
    info = res.flow_info.select("flow", pl.col("group").cast(pl.Utf8))
    info = info.with_columns(
        pl.when(pl.col("group") == "long").then(pl.lit("long")).otherwise(pl.lit("local")).alias("agg")
    )
    per_flow = res.flows.group_by("flow").agg([pl.col(c).max() for c in cols]).join(info, on="flow")
    out = {}
    for r in per_flow.group_by("agg").agg([pl.col(c).cast(pl.Float64).mean() for c in cols]).iter_rows(named=True):
        out[r["agg"]] = {c: float(r[c]) for c in cols}
    return out


def recovery_text(name: str, res: Any) -> str:
    rec = loss_recovery(res)
    parts = []
    for agg in ("long", "local"):
        r = rec.get(agg)
        if r is None:
            continue
        s = f"{agg} {r['timeouts']:.0f} RTOs vs {r['fast_retransmits']:.0f} fast retransmits"
        if "error_losses" in r:
            s += f" (bit map: {r['error_losses']:.0f} error, {r['congestion_losses']:.0f} congestion, {r['loss_mds']:.1f} loss MDs)"
        parts.append(s)
    return f"{name} per flow: " + "; ".join(parts)


def recovery_claims(results: Mapping[str, Any]) -> list[Claim]:
    """How each case's flows recovered their losses (measured: what the shares' cause rests on)."""
    return [
        Claim(
            f"{n}: loss recovery per flow",
            "",
            recovery_text(n, r).split(" per flow: ", 1)[1],
            "measured",
            "per flow over the run, mean over the long flows and over the local flows",
        )
        for n, r in results.items()
    ]


def efficiency_claim(u: Mapping[str, float], law: str) -> list[Claim]:
    """DCP-EW §IV's efficiency claim for one AI law's cases (keyed by protocol)."""
    out = []
    if "dcpew" in u and "dpcp" in u:
        out.append(
            Claim(
                efficiency_name(law),
                "DCP-EW > DPCP",
                f"{u['dcpew']:.1%} vs {u['dpcp']:.1%}",
                verdict(u["dcpew"] > u["dpcp"]),
                rule="DCP-EW's mean utilisation above DPCP's",
            )
        )
    return out


#: the mean loss rate of each link's Gilbert-Elliott model (DCP-EW §IV: "an average loss rate 5%")
LINK_LOSS = 0.05


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    """As mpcp-parking-lot's (the other AI law first), with what the long flows' path loss is;
    then DPCP's and DCP-EW's shares by the evidence cases (:func:`loss_causes`)."""
    path_loss = 1 - (1 - LINK_LOSS) ** len(PL_PORTS)
    tried = (
        f"computed: the long flows cross {len(PL_PORTS)} links of {LINK_LOSS:.0%} loss each, "
        f"{path_loss:.1%} path loss against {LINK_LOSS:.0%} for a local flow; VCP's split differs without "
        "the loss too (mpcp-parking-lot), which issue 35 item 3 (VCP against its authors' code) is about"
    )
    for law, other in (("seed001", "ns2"), ("ns2", "seed001")):
        name, other_name = (efficiency_name(x) for x in (law, other))
        if claim_named(claims, name) is not None:
            other_configuration(claims, name, other_name, LAW_NAMES[other])
    mpcp_parking_lot.causes(judged_cases(results), claims, quick, tried)
    loss_causes(results, claims)
    for law in ("seed001", "ns2"):
        shortfall(
            claims,
            efficiency_name(law),
            "DCP-EW no more efficient than DPCP here, under either AI law",
            tried,
        )


def loss_causes(results: Mapping[str, Any], claims: list[Claim]) -> None:
    """DPCP's and DCP-EW's shares under loss (issue 35 item 4): "paper" when this run shows that
    the split holds without the loss and that no loss response restores it under the loss (the
    never-cut ablation stays out of the claim's window too). The long flows cross four lossy
    links at four times the locals' RTT; they recover their losses by retransmission timeouts,
    which no congestion response governs (DCP-EW §III.D decides only cwnd, at a detected loss)."""
    if not all(n in results for n in EVIDENCE):
        return
    free, never = phase_shares(results[LOSSLESS]), phase_shares(results[NEVER_CUT])
    path_loss = 1 - (1 - LINK_LOSS) ** len(PL_PORTS)
    text = (
        f"the paper's loss ({LINK_LOSS:.0%} on each link: {path_loss:.1%} on the long flows' 4-link path at 4x the "
        "locals' RTT) leaves the long flows in retransmission timeouts; no loss response restores the split"
    )
    checks = {
        "L0 long share before L2 locals start": lambda ps: ps.l0_long_before,
        "L0 long share after L2 locals start": lambda ps: ps.l0_long_after,
        "L2 long share follows the L2 locals": lambda ps: ps.l2_long_before - ps.l2_long_after,
    }
    for protocol in ("dpcp", "dcpew"):
        for tag in ("", "-ns2"):
            name = protocol + tag
            if name not in results:
                continue
            for suffix, value in checks.items():
                c = claim_named(claims, f"{name}: {suffix}")
                if c is None or c.verdict != "differs" or c.accept is None:
                    continue
                if not (within(value(free), c.accept) and not within(value(never), c.accept)):
                    continue
                evidence = (
                    f"same run, ns2 law: without loss {LOSSLESS} gives {fmt_value(suffix, value(free))} "
                    f"(in the claim's window); under the loss with no loss ever cutting cwnd {NEVER_CUT} "
                    f"gives {fmt_value(suffix, value(never))} (outside it); {recovery_text(name, results[name])}; "
                    f"{recovery_text(NEVER_CUT, results[NEVER_CUT])}"
                )
                explain(claims, c.claim, Cause("paper", text, evidence))


def fmt_value(suffix: str, x: float) -> str:
    return f"a fall of {x * 100:.0f} points" if suffix.startswith("L2") else f"{x:.0%}"


def efficiency_name(law: str) -> str:
    return ("" if law == "seed001" else f"{law} law: ") + "DCP-EW efficient where DPCP under-utilises"


register(
    Experiment(
        name="dcpew-parking-lot",
        source="DCP-EW §IV",
        description="the mpcp-parking-lot topology with 5 % Gilbert-Elliott loss on every link: VCP, DPCP, DCP-EW, "
        "AI law seed001 vs ns2 (router γ 0.95)",
        cases=law_cases("dcpew-parking-lot.toml", ["vcp", "dpcp", "dcpew"], FLOW_GROUPS, PL_LINKS) + evidence_cases(),
        quick={"duration": "300s", "flows.3.start": "100s"},
        figures=figures,
        claims=claims,
        causes=causes,
        headline=lambda results, claims: mpcp_parking_lot.headline_for(
            "DCP-EW Figs. 4-5 (the fair split)", judged_cases(results), claims
        ),
    )
)
