"""Summary tables as plain rows of strings, shared by the console display and the HTML report."""

from __future__ import annotations

import math
from typing import Any

MAX_PORT_ROWS = 20
MAX_PORT_ROWS_FULL = 200

PORT_HEADER = ["port", "capacity", "util.", "queue mean", "queue max", "drop rate", "drops", "losses", "marks"]
PORT_TITLE = "ports (queues in packets; drop rate = drops / arrivals)"


def fmt_rate(bps: Any) -> str:
    """Bits per second with a unit."""
    if not _num(bps):
        return "–"
    for unit, f in (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if abs(bps) >= f:
            return f"{bps / f:.3g} {unit}"
    return f"{bps:.3g} b/s"


def fmt_time(s: Any) -> str:
    """Seconds, as ms below one second."""
    if not _num(s):
        return "–"
    if abs(s) < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s" if abs(s) < 1000 else f"{s:,.0f} s"


def fmt_pct(x: Any, digits: int = 3) -> str:
    return f"{100 * x:.{digits}g} %" if _num(x) else "–"


def fmt_num(x: Any) -> str:
    if not _num(x):
        return "–"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:.4g}"


def fmt_bytes(n: Any) -> str:
    if not _num(n):
        return "–"
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= f:
            return f"{n / f:.3g} {unit}"
    return f"{n:.0f} B"


def port_rows(
    summary: dict, capacities: dict[int, float] | None = None, full: bool = False
) -> tuple[list[str], list[list[str]], str]:
    """Header, rows (busiest first) and a note on what was left out.

    ``full``: every port that carried or dropped anything (at most 200); otherwise only the
    interesting ones (utilisation >= 10 %, any drop/loss/mark, or a mean queue >= 1 packet),
    at most 20. The losses and marks columns are left out when zero on every port shown."""
    active = [p for p in summary.get("ports", []) if (p.get("tx_pkts") or 0) + (p.get("drops") or 0) > 0]
    active.sort(key=lambda p: (-(p.get("utilisation") or 0.0), p.get("port", 0)))
    ports = active if full else [p for p in active if _interesting(p)] or active[:1]
    ports = ports[: MAX_PORT_ROWS_FULL if full else MAX_PORT_ROWS]
    hidden = len(active) - len(ports)
    note = f"{hidden} more lightly used port{'s' if hidden != 1 else ''} not shown" if hidden else ""
    caps = capacities or {}
    rows = [
        [
            str(p.get("name", p.get("port"))),
            fmt_rate(p.get("capacity_bps", caps.get(p.get("port")))),
            fmt_pct(p.get("utilisation")),
            _fmt_q(p.get("mean_queue_pkts")),
            fmt_num(p.get("max_queue_pkts")),
            fmt_pct(p.get("drop_rate")),
            fmt_num(p.get("drops")),
            fmt_num(p.get("losses")),
            fmt_num(p.get("marks")),
        ]
        for p in ports
    ]
    header = list(PORT_HEADER)
    for col in ("marks", "losses"):
        if not any(p.get(col) for p in ports):
            i = header.index(col)
            header.pop(i)
            for r in rows:
                r.pop(i)
    return header, rows, note


def flow_rows(summary: dict) -> list[list[str]]:
    """(metric, value) rows for flows, fairness, goodput and FCT."""
    f = summary.get("flows", {})
    rows = [["flows", fmt_num(f.get("count"))]]
    if f.get("completed"):
        rows.append(["completed", fmt_num(f.get("completed"))])
    w = f.get("jain_window_s") or [None, None]
    if f.get("jain") is not None:
        rows.append([f"Jain's index ({fmt_num(f.get('jain_flows'))} flows, {_win(w)})", f"{f['jain']:.4f}"])
    else:
        why = "no flow active through the window" if f.get("series_recorded", True) else "flow series not recorded"
        rows.append([f"Jain's index ({_win(w)})", f"– ({why})"])
    rows.append(["aggregate goodput (whole run)", fmt_rate(f.get("aggregate_goodput_bps"))])
    if f.get("aggregate_goodput_window_bps") is not None:
        rows.append([f"aggregate goodput ({_win(w)})", fmt_rate(f.get("aggregate_goodput_window_bps"))])
    pf = f.get("per_flow_goodput_bps")
    if pf:
        rows.append(
            [
                "per-flow goodput mean / min / max",
                f"{fmt_rate(pf['mean'])} / {fmt_rate(pf['min'])} / {fmt_rate(pf['max'])}",
            ]
        )
    c = summary.get("fct", {})
    if c.get("count"):
        rows.append(["FCT mean / median", f"{fmt_time(c['mean_s'])} / {fmt_time(c['median_s'])}"])
        rows.append(["FCT p95 / p99", f"{fmt_time(c['p95_s'])} / {fmt_time(c['p99_s'])}"])
    return rows


def fct_bin_rows(summary: dict) -> list[list[str]]:
    """Rows of mean FCT per size decade."""
    return [
        [
            f"{fmt_bytes(b['size_lo'])} – {fmt_bytes(b['size_hi'])}",
            fmt_num(b["count"]),
            fmt_time(b["mean_fct_s"]),
            fmt_time(b["median_fct_s"]),
        ]
        for b in summary.get("fct", {}).get("by_size", [])
    ]


def totals_rows(summary: dict) -> list[list[str]]:
    """Engine totals: simulated time, events, packets."""
    keys = [
        ("simulated time", "sim_time_s", fmt_time),
        ("events", "events", fmt_num),
        ("packet hops", "packet_hops", fmt_num),
        ("packets sent", "sent_pkts", fmt_num),
        ("packets delivered", "delivered_pkts", fmt_num),
        ("packets dropped", "dropped_pkts", fmt_num),
        ("packets lost (wire)", "lost_pkts", fmt_num),
        ("packets in flight at end", "in_flight_pkts", fmt_num),
    ]
    rows = [[label, f(summary[k])] for label, k, f in keys if k in summary]
    run = summary.get("run", {})
    if run.get("setup_s") is not None:
        rows.append(["set-up (read, check, build)", fmt_time(run["setup_s"])])
    if run.get("wall_s") is not None:
        rows.append(["wall-clock time", fmt_time(run["wall_s"])])
    if run.get("events_per_s"):
        rows.append(["events per second", f"{run['events_per_s'] / 1e6:.3g} M"])
    if run.get("peak_memory_bytes"):
        rows.append(["peak memory", fmt_bytes(run["peak_memory_bytes"])])
    return rows


def _interesting(p: dict) -> bool:
    return (
        (p.get("utilisation") or 0.0) >= 0.1
        or any(p.get(k) for k in ("drops", "losses", "marks"))
        or (p.get("mean_queue_pkts") or 0.0) >= 1.0
    )


def _fmt_q(x: Any) -> str:
    return f"{x:.1f}" if _num(x) else "–"


def _win(w: list) -> str:
    return f"{fmt_num(w[0])}–{fmt_num(w[1])} s" if None not in w else "window"


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
