"""The kernel run's results document (docs/KERNEL.md): the tables and summary ``racc run``
writes, built from the traffic programs' TCP_INFO samples, the qdisc statistics sampled by
``racc.kernel.run.Session``, the delay line's counts and the BPF programs' counters.
"""

from __future__ import annotations

import os
from typing import Any

from racc.kernel import plan as _plan
from racc.results import TABLES

#: the per-sample port columns the kernel's rows fill: the links table's (racc.results), but the
#: port's name, which the results take from port_info
LINK_COLUMNS = tuple(c for c in TABLES["links"] if c != "name")


def delay_warnings(plan: _plan.Plan, delay_counts: dict) -> list[str]:
    """A delay line that fell behind (p99 lateness above a tenth of the shortest delayed link's
    delay, and above 1 ms) or dropped frames has changed the scenario's round trips: said, so
    that nobody reads such a run as the scenario's."""
    out = []
    late = (delay_counts or {}).get("late_s") or {}
    delays = [lk.delay_s for lk in plan.links if lk.delay_s > 0]
    p99 = late.get("p99")
    if p99 is not None and delays and p99 > max(1e-3, 0.1 * min(delays)):
        out.append(
            f"the delay line fell behind: frames {p99 * 1e3:.1f} ms late at p99 (shortest link delay "
            f"{min(delays) * 1e3:.1f} ms); the run's round trips are not the scenario's (this machine's CPU)"
        )
    lost = sum(v.get("dropped", 0) for v in ((delay_counts or {}).get("links") or {}).values())
    if lost:
        out.append(f"the delay line lost {lost} frames for want of buffer (this machine's CPU)")
    return out


def departures(plan: _plan.Plan) -> list[str]:
    """Where the kernel's run differs from the scenario by what the kernel offers."""
    out = []
    red = [p.name for p in plan.ports if p.router == "red" and (p.router_params or {}).get("gentle", True)]
    if red:
        out.append(
            f"RED at {', '.join(red)}: Linux's red has no gentle mode (above max_th it drops or marks every packet)"
        )
    return out


#: Per-flow columns of the kernel's flows table beyond the simulator's: TCP_INFO's
#: ``tcpi_pacing_rate`` (bits/s) and ``tcpi_total_retrans`` (segments, cumulative).
KERNEL_FLOW_METRICS = ("pacing_bps", "retransmits")


def build(
    session: Any, hosts: dict[int, dict], delay_counts: dict, pcap_info: Any, interrupted: bool
) -> dict[str, Any]:
    """The results document ``racc._core.Simulation.results()`` returns, from the kernel's counters
    and ``session``'s samples (``racc.kernel.run.Session``)."""
    plan = session.plan
    reached = session.reached if interrupted else plan.duration_s
    flows: dict[str, list] = {
        k: []
        for k in ("time_s", "flow", "goodput_bps", "cwnd_bytes", "rate_bps", "srtt_s", "acked_bytes")
        + KERNEL_FLOW_METRICS
    }
    goodput_bytes = 0
    completions: dict[str, list] = {k: [] for k in ("flow", "size_bytes", "start_s", "end_s", "fct_s")}
    errors = []
    seen: dict[str, str] = {}
    min_rtt: dict[str, float] = {}
    for h in sorted(hosts):
        r = hosts[h]
        s = r["samples"]
        last: dict[int, tuple[float, int]] = {}
        for i in range(len(s["time_s"])):
            fid, t, acked = s["flow"][i], s["time_s"][i], s["acked"][i]
            t_prev, a_prev = last.get(fid, (None, 0))
            start = plan.flows[fid].start_s
            span = t - (t_prev if t_prev is not None else max(0.0, t - plan.interval_s))
            flows["time_s"].append(t)
            flows["flow"].append(fid)
            flows["goodput_bps"].append((acked - a_prev) * 8 / span if span > 0 and t > start else 0.0)
            flows["cwnd_bytes"].append(float(s["cwnd_bytes"][i]))
            flows["rate_bps"].append(float(s["rate_bps"][i]))
            flows["srtt_s"].append(float(s["srtt_s"][i]))
            flows["acked_bytes"].append(int(acked))
            flows["pacing_bps"].append(float(s["pacing_bps"][i]))
            flows["retransmits"].append(int(s["retrans"][i]))
            last[fid] = (t, acked)
        for fid, info in r["final"].items():
            goodput_bytes += int(info["acked"])
            min_rtt[fid] = info["min_rtt_s"]
        for c in r["completions"]:
            completions["flow"].append(c["flow"])
            completions["size_bytes"].append(c["size_bytes"])
            completions["start_s"].append(c["start_s"])
            completions["end_s"].append(c["end_s"])
            completions["fct_s"].append(c["end_s"] - c["start_s"])
        errors += [f"{r['host']}: {e}" for e in r.get("errors", [])]
        seen.update(r.get("cc", {}))
    ports = []
    for p in plan.ports:
        t = session.totals.get(p.index, {})
        n = max(1, t.get("n", 0))
        ports.append(
            {
                "port": p.index,
                "name": p.name,
                "router": p.router,
                "capacity_bps": p.capacity_bps,
                "utilisation": t.get("tx_bytes", 0) * 8 / (p.capacity_bps * reached) if reached > 0 else 0.0,
                "mean_queue_pkts": t.get("q", 0) / n,
                "mean_queue_bytes": t.get("qb", 0) / n,
                "max_queue_pkts": t.get("qmax", 0),
                "drop_rate": t.get("drops", 0) / t["arrivals"] if t.get("arrivals") else 0.0,
                "arrivals": t.get("arrivals", 0),
                "tx_pkts": t.get("tx_pkts", 0),
                "tx_bytes": t.get("tx_bytes", 0),
                "drops": t.get("drops", 0),
                "losses": 0,
                "marks": 0,
            }
        )
    bpf_counters = {}
    for port, h in session.router_handles.items():
        try:
            bpf_counters[plan.ports[port].name] = dict(h.counters())
        except Exception as exc:  # noqa: BLE001 - counters are a report, not the run
            bpf_counters[plan.ports[port].name] = {"error": str(exc)}
    bpf_hosts = {}
    for protocol, h in session.host_handles.items():
        try:
            bpf_hosts[protocol] = dict(h.counters())
        except Exception as exc:  # noqa: BLE001 - counters are a report, not the run
            bpf_hosts[protocol] = {"error": str(exc)}
    summary = {
        "scenario": plan.name,
        "sim_time_s": reached,
        "sample_interval_s": plan.interval_s,
        "goodput_bytes": goodput_bytes,
        "dropped_pkts": sum(p["drops"] for p in ports),
        "flow_metric_units": {"pacing_bps": "bps", "retransmits": "segments"},
        "link_metric_units": {},
        "ports": ports,
        "kernel": {
            "kernel": os.uname().release,
            "controllers": {str(f.id): f.cc for f in plan.flows},
            # TCP_CONGESTION read back from each connected socket.
            "controllers_seen": dict(sorted(seen.items(), key=lambda kv: int(kv[0]))),
            # TCP_INFO's min_rtt of each flow at its end: the path's round trip with no queue.
            "min_rtt_s": dict(sorted(min_rtt.items(), key=lambda kv: int(kv[0]))),
            "queue": "htb (rate = ceil = capacity, size table: IP bytes) + pfifo/bfifo leaf (the buffer)",
            "delay": (
                "netem in a link namespace per link (the kernel's)"
                if session.delay_qdisc is not None
                else "user-space delay line per link (this kernel has no sch_netem)"
                if session.delayed
                else "none"
            ),
            "delay_line": delay_counts,
            # The router modules' counters per port, and the controllers' (echoes, MI/AI/MD).
            "bpf": bpf_counters,
            "bpf_hosts": bpf_hosts,
            "errors": errors,
            "pcap": pcap_info,
            "tcp": {"timestamps": False, "mss_bytes": plan.packet_size - 40},
            "departures": departures(plan),
        },
    }
    summary["kernel"]["warnings"] = delay_warnings(plan, delay_counts)
    if interrupted:
        summary["kernel"]["reached_s"] = reached
    return {
        "links": session.rows if session.rows["time_s"] else {},
        "flows": flows if flows["time_s"] else {},
        "completions": completions if completions["flow"] else {},
        "flow_info": flow_info(plan),
        "summary": summary,
    }


def flow_info(plan: _plan.Plan) -> dict[str, list]:
    """The flow_info table: each flow's protocol (``linux:NAME`` for the kernel's own), ends and size."""
    names = [n["name"] for n in plan.nodes]
    return {
        "flow": [f.id for f in plan.flows],
        "protocol": [
            f"linux:{f.cc}" if f.protocol in _plan.LINUX_CC or f.cc in _plan.CC_CHOICES else f.protocol
            for f in plan.flows
        ],
        "src": [names[f.src] for f in plan.flows],
        "dst": [names[f.dst] for f in plan.flows],
        "group": [f.group for f in plan.flows],
        "start_s": [f.start_s for f in plan.flows],
        "stop_s": [float("nan") if f.stop_s is None else f.stop_s for f in plan.flows],
        "size_bytes": [f.size_bytes or 0 for f in plan.flows],
    }
