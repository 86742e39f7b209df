"""The ns-2 counter reader: ``counters.txt`` (see tcl.py) into racc's result tables.

The tables have racc's shapes and meanings (results.TABLES), so one set of functions reads both
sides: ``links`` has a row per recorded port and sample with the counts of that interval and the
queue at its end, plus ``queue_pkt_s``, the cumulative integral of the waiting queue (ns-2's
QueueMonitor integrator); ``flows`` has a row per running flow and sample; ``completions`` a row
per finished flow. Conversions from ns-2's units:

* acknowledged payload = packets acknowledged x packetSize_ (at most the flow's size): ``ack_`` is
  the highest cumulatively acknowledged sequence number, and with ``syn_`` number 0 is the SYN;
* ``srtt_`` is 8 x SRTT in ticks of ``tcpTick_``; ``cwnd_`` is in packets;
* retransmissions are ``nrexmitpack_`` (a resent SYN counts, unlike racc's), timeouts ``nrexmit_``;
* marks are the QueueMonitor's ``pmarks_``, the CE-marked packets that *leave* the port: a port
  that cannot mark (anything but RED with action = "mark") gets 0, since what it forwards was
  marked upstream; a marking port after another still counts the upstream marks too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from racc.crosscheck.support import flow_tcp_params
from racc.crosscheck.tcl import mss_of
from racc.results import Results, frame


def parse(path: Path) -> tuple[list[list[float]], list[list[float]], list[tuple[int, float]]]:
    """The ``L``, ``F`` and ``D`` records of a counters file, as numbers."""
    ports, flows, done = [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            kind, *rest = line.split()
            if kind == "L":
                ports.append([float(x) for x in rest])
            elif kind == "F":
                flows.append([float(x) for x in rest])
            elif kind == "D":
                done.append((int(rest[0]), float(rest[1])))
    return ports, flows, done


def read(
    path: Path, resolved: dict[str, Any], flow_info: pl.DataFrame, port_info: pl.DataFrame, interval_ns: int
) -> Results:
    """ns-2's counters for one seed as a :class:`Results` (summary included). Sample k is at
    k x ``interval_ns``, in seconds as racc's engine writes it (integer ns x 1e-9)."""
    ports, flows, done = parse(path)
    caps = dict(zip(port_info.get_column("port").to_list(), port_info.get_column("capacity_bps").to_list()))
    names = dict(zip(port_info.get_column("port").to_list(), port_info.get_column("name").to_list()))
    links = _links(ports, interval_ns, caps, names, marking_ports(resolved))
    flow_tab = _flows(flows, resolved, interval_ns)
    completions = _completions(done, resolved)
    duration = resolved["duration"] / 1e9
    core = {"scenario": resolved["name"], "seed": resolved["seed"], "sim_time_s": duration}
    # Every flow's payload bytes acknowledged by the end (ns-2's counters have no receiver
    # bytes; racc's engine counts what receivers delivered, which differs by what is in flight).
    last: dict[int, int] = {}
    for f, b in zip(flow_tab["flow"], flow_tab["acked_bytes"]):
        last[f] = max(last.get(f, 0), b)
    core["goodput_bytes"] = sum(last.values())
    core["sample_interval_s"] = interval_ns * 1e-9
    core["ports"] = _port_totals(links, caps, names, duration)
    return Results(
        links=frame("links", links),
        flows=frame("flows", flow_tab),
        completions=frame("completions", completions),
        flow_info=flow_info,
        port_info=port_info,
        summary=core,
        resolved=resolved,
        name=resolved["name"],
    )


def marking_ports(resolved: dict[str, Any]) -> set[int]:
    """Ports whose router module can set CE: RED with action = "mark"."""
    out = set()
    for li, link in enumerate(resolved["links"]):
        if link["router"] == "red" and (link.get("router_params") or {}).get("action") == "mark":
            out |= {2 * li, 2 * li + 1}
    return out


def _links(rows: list[list[float]], step: int, caps: dict, names: dict, marking: set[int]) -> dict[str, list]:
    dt = step * 1e-9
    cols: dict[str, list] = {c: [] for c in ("time_s", "port", "name", "tx_bytes", "tx_pkts", "throughput_bps")}
    for c in ("utilisation", "queue_pkts", "queue_bytes", "drops", "losses", "marks", "arrivals", "queue_pkt_s"):
        cols[c] = []
    prev: dict[int, list[float]] = {}
    for k, port, arr, dep, bdep, drops, marks, lost, q, qb, qsum in rows:
        p = int(port)
        a0, d0, b0, dr0, m0, l0 = prev.get(p, [0.0] * 6)
        prev[p] = [arr, dep, bdep, drops, marks, lost]
        thr = (bdep - b0) * 8.0 / dt
        cols["time_s"].append(int(k) * step * 1e-9)
        cols["port"].append(p)
        cols["name"].append(names.get(p))
        cols["tx_bytes"].append(int(bdep - b0))
        cols["tx_pkts"].append(int(dep - d0))
        cols["throughput_bps"].append(thr)
        cols["utilisation"].append(thr / caps[p])
        cols["queue_pkts"].append(int(q))
        cols["queue_bytes"].append(int(qb))
        cols["drops"].append(int(drops - dr0))
        cols["losses"].append(int(lost - l0))
        cols["marks"].append(int(marks - m0) if p in marking else 0)
        cols["arrivals"].append(int(arr - a0))
        cols["queue_pkt_s"].append(qsum)
    return cols


def acked_bytes(ack: float, flow: dict[str, Any], mss: int) -> int:
    """Payload bytes acknowledged by ns-2's ``ack_`` (sequence numbers count packets; 0 is the SYN)."""
    pkts = max(int(ack), 0) if flow["handshake"] else max(int(ack) + 1, 0)
    b = pkts * mss
    return b if flow["size_bytes"] is None else min(b, int(flow["size_bytes"]))


def _flows(rows: list[list[float]], resolved: dict[str, Any], step: int) -> dict[str, list]:
    dt = step * 1e-9
    specs = resolved["flows"]
    ticks = {}
    cols: dict[str, list] = {
        c: []
        for c in ("time_s", "flow", "goodput_bps", "cwnd_bytes", "rate_bps", "srtt_s", "acked_bytes")
        + ("retransmits", "timeouts", "spurious_timeouts")
    }
    last: dict[int, int] = {}
    for k, i, ack, rexmit_pkts, rtos, cwnd, srtt8 in rows:
        f = int(i)
        spec = specs[f]
        if spec["group"] not in ticks:
            ticks[spec["group"]] = float(flow_tcp_params(spec)["clock_granularity"])
        mss = mss_of(spec, resolved["packet_size"])  # packetSize_: 40 or, for XCP, 60 header bytes less
        acked = acked_bytes(ack, spec, mss)
        cols["time_s"].append(int(k) * step * 1e-9)
        cols["flow"].append(f)
        cols["goodput_bps"].append((acked - last.get(f, 0)) * 8.0 / dt)
        last[f] = acked
        cols["cwnd_bytes"].append(cwnd * mss)
        cols["rate_bps"].append(0.0)
        cols["srtt_s"].append(srtt8 / 8.0 * ticks[spec["group"]])
        cols["acked_bytes"].append(acked)
        cols["retransmits"].append(int(rexmit_pkts))
        cols["timeouts"].append(int(rtos))
        cols["spurious_timeouts"].append(0)
    return cols


def _completions(done: list[tuple[int, float]], resolved: dict[str, Any]) -> dict[str, list]:
    cols: dict[str, list] = {c: [] for c in ("flow", "size_bytes", "start_s", "end_s", "fct_s")}
    for i, t in sorted(done, key=lambda d: (d[1], d[0])):
        f = resolved["flows"][i]
        start = f["start"] / 1e9
        cols["flow"].append(i)
        cols["size_bytes"].append(int(f["size_bytes"] or 0))
        cols["start_s"].append(start)
        cols["end_s"].append(t)
        cols["fct_s"].append(t - start)
    return cols


def _port_totals(links: dict[str, list], caps: dict, names: dict, duration: float) -> list[dict[str, Any]]:
    """Whole-run figures per recorded port, in the engine summary's shape (no maximum queue)."""
    df = pl.DataFrame(links)
    if df.height == 0:
        return []
    tot = df.group_by("port").agg(
        pl.col("tx_bytes").sum(),
        pl.col("tx_pkts").sum(),
        pl.col("arrivals").sum(),
        pl.col("drops").sum(),
        pl.col("losses").sum(),
        pl.col("marks").sum(),
        pl.col("queue_pkt_s").last(),
    )
    out = []
    for r in tot.sort("port").iter_rows(named=True):
        p = r["port"]
        out.append(
            {
                "port": p,
                "name": names.get(p),
                "capacity_bps": caps[p],
                "utilisation": r["tx_bytes"] * 8.0 / (caps[p] * duration),
                "mean_queue_pkts": r["queue_pkt_s"] / duration,
                "max_queue_pkts": None,
                "drop_rate": r["drops"] / r["arrivals"] if r["arrivals"] else 0.0,
                **{c: r[c] for c in ("arrivals", "tx_pkts", "tx_bytes", "drops", "losses", "marks")},
            }
        )
    return out
