"""mpcp-loss-sweep, MPCP §4.3 (Fig. 4): one 1 MB FTP transfer over the mpcp-dumbbell
testbed with 0-50 % uniform loss on the data or the ACK path, VCP vs DPCP."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib import ticker

from racc.experiments.base import ABOUT, MUCH, Case, Cause, Claim, Experiment, explain, judged, register, verdict
from racc.experiments.causes import claim_named, shortfall
from racc.experiments.figures import save, subplots
from racc.experiments.protocols import PROTOCOLS, protocol_overrides

LOSS_RATES = [0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50]
LOSS_KEY = "topology.bottleneck.loss.p"
BOTTLENECK = "r0->r1"
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


def cases() -> list[Case]:
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
    """Per loss rate: how often the sender fell back to VCP mode (MPCP §3.4) in the run."""
    out = {}
    for name, res in results.items():
        proto, dirn, rate = parse_loss_case_name(name)
        if (proto, dirn) == (protocol, direction) and "vcp_fallbacks" in res.flows.columns:
            out[rate] = int(res.flows["vcp_fallbacks"].max() or 0)
    return dict(sorted(out.items()))


def figures(results: Mapping[str, Any], out: Path) -> list[Path]:
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


def claims(results: Mapping[str, Any], quick: bool) -> list[Claim]:
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
                    rule="DPCP's FCT no later than VCP's at every loss rate",
                )
            )
        if d:
            base = d.get(0.0)
            low = {r: f for r, f in d.items() if r < 0.30}
            unfinished = [r for r, f in low.items() if f is None]
            if unfinished:
                worst, measured = None, f"not finished within the run at {min(unfinished):.0%} loss and above"
            else:
                worst = max(low.values()) / base if base else inf
                measured = f"worst FCT below 30 %: {worst:.1f}x the loss-free one"
            out.append(
                judged(
                    f"{direction} loss: DPCP little affected below 30 %",
                    "little affected",
                    worst,
                    measured,
                    (None, 1 + ABOUT),
                    f"worst FCT below 30 % loss at most {1 + ABOUT:g}x the loss-free one (the 'about' rule)",
                )
            )
            high = [d[r] for r in d if r >= 0.35]
            mid = [d[r] for r in d if 0.2 <= r < 0.3]
            if high and mid and all(m is not None for m in mid):
                # Every point from 35 % on, not the worst one alone, must be worse than 20-30 %.
                best_high = min((x if x is not None else inf) for x in high)
                jump = best_high / max(mid)
                out.append(
                    judged(
                        f"{direction} loss: DPCP degrades past 35 %",
                        "degrades",
                        jump,
                        "not finished" if jump == inf else f"{jump:.1f}x the 20-30 % FCT at best",
                        (MUCH, None),
                        f"FCT at every rate from 35 % at least {MUCH:g}x the worst 20-30 % FCT (the 'much' rule)",
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
                    rule="no fallback below 30 % loss, at least one at every rate from 35 %",
                )
            )
    return out


def expected_triggers(n: int, p: float) -> float:
    """MPCP §3.4's fallback trigger, "three consecutive MSPs/LSPs", on a stream of n alternating
    echoes each lost independently with probability p: a run MSP, (LSP lost), MSP, (LSP lost),
    MSP (or the same with LSPs) starts at an echo with probability p²(1 − p)³."""
    return n * p * p * (1 - p) ** 3


def expected_sendings(w: int, p: float) -> float:
    """E[max over w packets of the sendings each needs] under independent loss p:
    Σ_{r ≥ 0} 1 − (1 − p^r)^w."""
    total, r = 0.0, 0
    while True:
        term = 1 - (1 - p**r) ** w
        total += term
        r += 1
        if term < 1e-6 or r > 1000:
            return total


#: IPv4 + TCP headers of a data packet: its payload is the scenario's packet size less these
TCP_IP_HEADERS = 40


def transfer_packets(res: Any) -> tuple[int, int]:
    """(data packets of the transfer, their payload in bytes)."""
    mss = int(res.resolved["packet_size"]) - TCP_IP_HEADERS
    return math.ceil(int(res.flow_info["size_bytes"][0]) / mss), mss


def causes(results: Mapping[str, Any], claims: list[Claim], quick: bool) -> None:
    """DPCP under loss (issue 35 item 5). MPCP §3.4's own fallback trigger fires at any loss rate
    (arithmetic on the run's transfer); a reliable transfer of this size and RTT cannot stay within
    the "little affected" window from a few per cent of data loss, whatever its transport (the
    expected sendings of its last window's unluckiest packet, one RTT apart). What no arithmetic
    covers is racc's open shortfall, with the sweep's numbers."""
    for direction in LOSS_DIRECTIONS:
        _fallback_cause(results, claims, direction)
    _data_bound_cause(results, claims)
    _ack_causes(results, claims)
    for direction in LOSS_DIRECTIONS:
        fb = fallbacks_by_loss(results, "dpcp", direction)
        seen = "fallbacks to VCP mode per loss rate in this run: " + ", ".join(f"{r:.0%} {n}" for r, n in fb.items())
        for name, text in (
            (
                "DPCP little affected below 30 %",
                "DPCP's transfer is slowed below 30 % loss, where MPCP has it little affected",
            ),
            ("DPCP degrades past 35 %", "DPCP's completion time does not jump past 35 % loss"),
            ("DPCP falls back to VCP mode only at high loss", "DPCP falls back to VCP mode at low loss rates"),
            ("DPCP completes no later than VCP", "DPCP completes later than VCP at some loss rates"),
        ):
            c = claim_named(claims, f"{direction} loss: {name}")
            if c is not None and c.cause is None:
                shortfall(claims, c.claim, text, f"the arithmetic of MPCP §3.4's trigger did not cover it; {seen}")


def _case(results: Mapping[str, Any], protocol: str, direction: str, rate: float) -> Any:
    return results.get(loss_case_name(protocol, direction, rate))


def _trigger_text(results: Mapping[str, Any], direction: str, below: float) -> tuple[str, float]:
    """("rate: expected vs measured fallbacks" for the lossy rates below ``below``, the largest
    expected number among them)."""
    fb = fallbacks_by_loss(results, "dpcp", direction)
    parts, top = [], 0.0
    for r, n in fb.items():
        res = _case(results, "dpcp", direction, r)
        if r == 0 or r >= below or res is None:
            continue
        e = expected_triggers(transfer_packets(res)[0], r)
        top = max(top, e)
        parts.append(f"{r:.0%}: {e:.1f} expected, {n} measured")
    return "; ".join(parts), top


def _fallback_cause(results: Mapping[str, Any], claims: list[Claim], direction: str) -> None:
    name = f"{direction} loss: DPCP falls back to VCP mode only at high loss"
    c = claim_named(claims, name)
    if c is None or c.verdict != "differs":
        return
    seen, top = _trigger_text(results, direction, 0.30)
    if top < 1.0:
        return
    explain(
        claims,
        name,
        Cause(
            "paper",
            "MPCP §3.4's own trigger (three consecutive MSPs/LSPs) fires at low loss; only the permanent "
            "'lossy link' state is for high loss",
            "MPCP §3.4 triggers n·p²(1−p)³ expected over the transfer's n echoes, were chains kept throughout "
            f"(a fallback pauses them for resume_after RTTs), against this run's fallbacks: {seen}",
        ),
    )


def fct_bound(fct0: float, rtt: float, pkt_s: float, window: int, p: float) -> float:
    """A lower bound on the expected FCT of the transfer under independent data loss p, for any
    reliable sender that is no faster than its loss-free run (FCT₀): that run's last k packets
    (k up to its last window) go out one bottleneck packet time ``pkt_s`` apart, ending one RTT
    before FCT₀; under loss none goes out sooner, the unluckiest of them needs E[R_k] sendings
    (:func:`expected_sendings`) each at least an RTT after the one before, and its ACK one RTT
    after the last. Best over k: FCT₀ − k·pkt_s + (E[R_k] − 1)·RTT."""
    return max(fct0 - k * pkt_s + (expected_sendings(k, p) - 1) * rtt for k in range(1, window + 1))


def _data_bound_cause(results: Mapping[str, Any], claims: list[Claim]) -> None:
    """Data loss, "little affected below 30 %": :func:`fct_bound` from the loss-free run."""
    name = "data loss: DPCP little affected below 30 %"
    c = claim_named(claims, name)
    base = _case(results, "dpcp", "data", 0.0)
    if c is None or c.verdict != "differs" or base is None or base.completions.height == 0:
        return
    fct0 = float(base.completions["fct_s"][0])
    rtt = float(base.flow_info["rtt_prop_s"][0])
    n, mss = transfer_packets(base)
    window = min(n, int(base.flows["cwnd_bytes"].max() // mss))
    size = int(base.resolved["packet_size"])
    pkt_s = size * 8 / float(base.port_info.filter(base.port_info["name"] == BOTTLENECK)["capacity_bps"][0])
    limit = 1 + ABOUT
    bounds = {r: fct_bound(fct0, rtt, pkt_s, window, r) / fct0 for r in LOSS_RATES if 0 < r < 0.30}
    over = [r for r, b in bounds.items() if b > limit]
    if not over:
        return
    explain(
        claims,
        name,
        Cause(
            "unspecified",
            "MPCP §4.3 gives neither the transfer size nor the testbed's RTT; at 1 MB and this RTT no reliable "
            f"sender stays within {limit:g}x of its loss-free FCT from {min(over):.0%} data loss",
            f"computed from this run's loss-free transfer (FCT₀ {fct0:.2f} s, RTT {rtt:.2f} s, last window "
            f"{window} packets, {pkt_s * 1e3:.1f} ms apart): expected FCT at least "
            + ", ".join(f"{r:.0%} {b:.2f}x" for r, b in bounds.items())
            + f" FCT₀ for any sender no faster than that run; measured: {c.measured}",
        ),
    )


def _ack_causes(results: Mapping[str, Any], claims: list[Claim]) -> None:
    """ACK loss: the transport loses nothing but echoes (cumulative ACKs), so what slows DPCP is
    MPCP §3.4's fallback: the rest of the transfer goes at VCP's pace (VCP's loss-free FCT in the
    run), and nothing sets 35 % apart, the trigger fires from the lowest rates."""
    fb = fallbacks_by_loss(results, "dpcp", "ack")
    d0, v0 = _case(results, "dpcp", "ack", 0.0), _case(results, "vcp", "ack", 0.0)
    if not fb or d0 is None or v0 is None or d0.completions.height == 0 or v0.completions.height == 0:
        return
    seen, top = _trigger_text(results, "ack", 0.30)
    if top < 1.0:
        return
    fcts = dict(fct_by_loss(results).get(("dpcp", "ack"), []))
    fd, fv = float(d0.completions["fct_s"][0]), float(v0.completions["fct_s"][0])
    rtos = {
        r: int(res.flows["timeouts"].max() or 0)
        for r in sorted(fcts)
        if (res := _case(results, "dpcp", "ack", r)) is not None
    }
    evidence = (
        f"fallbacks: {seen}; a fallback sends the rest in VCP mode (loss-free FCT VCP {fv:.1f} s vs DPCP "
        f"{fd:.1f} s in this run); DPCP's FCT (RTOs) by ACK loss rate: "
        + ", ".join(f"{r:.0%} {_fmt_fct(f)} ({rtos.get(r, 0)})" for r, f in sorted(fcts.items()))
    )
    for name, text in (
        (
            "ack loss: DPCP little affected below 30 %",
            "MPCP §3.4's own trigger falls back to VCP mode from low ACK loss; VCP mode is VCP's pace",
        ),
        (
            "ack loss: DPCP degrades past 35 %",
            "MPCP §3.4's own trigger falls back from low ACK loss, so nothing changes past 35 %",
        ),
    ):
        c = claim_named(claims, name)
        if c is not None and c.verdict == "differs":
            explain(claims, name, Cause("paper", text, evidence))


register(
    Experiment(
        name="mpcp-loss-sweep",
        source="MPCP §4.3 (Fig. 4)",
        description="one 1 MB FTP transfer over the mpcp-dumbbell testbed with 0-50 % uniform loss on the data or the ACK path, VCP vs DPCP",
        cases=cases(),
        quick={"duration": "120s"},
        figures=figures,
        claims=claims,
        causes=causes,
    )
)
