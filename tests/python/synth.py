"""Synthetic Results for plot/report/save tests (no engine needed)."""

import math

from racc.results import TABLES, Results, frame


def make_results(n_flows=3, n_done=20, duration=10.0, dt=0.5, name="synthetic"):
    times = [dt * (k + 1) for k in range(int(duration / dt))]
    F = {c: [] for c in TABLES["flows"]}
    for t in times:
        for f in range(n_flows):
            g = 1e6 * (1 + f % 3) * (1 + 0.2 * math.sin(t + f))
            F["time_s"].append(t)
            F["flow"].append(f)
            F["goodput_bps"].append(g)
            F["cwnd_bytes"].append(1e4 * (1 + f % 4))
            F["rate_bps"].append(g)
            F["srtt_s"].append(0.05)
            F["acked_bytes"].append(int(g * t / 8))
    L = {c: [] for c in TABLES["links"]}
    for t in times:
        for p in range(3):
            u = [0.95, 0.3, 0.0][p]
            q = [int(40 * (1 + math.sin(t))), 0, 0][p]
            for c, v in (
                ("time_s", t),
                ("port", p),
                ("name", f"r{p}->r{p + 1}"),
                ("tx_bytes", int(u * 1e6)),
                ("tx_pkts", int(u * 1e3)),
                ("throughput_bps", u * 1e7),
                ("utilisation", u),
                ("queue_pkts", q),
                ("queue_bytes", q * 1000),
                ("drops", 0),
                ("losses", 0),
                ("marks", 0),
                ("arrivals", int(u * 1e3)),
            ):
                L[c].append(v)
    C = {
        "flow": [n_flows + i for i in range(n_done)],
        "size_bytes": [int(1000 * 1.5**i) for i in range(n_done)],
        "start_s": [0.1 * i for i in range(n_done)],
        "end_s": [],
        "fct_s": [],
    }
    for i in range(n_done):
        fct = 0.1 + C["size_bytes"][i] / 1e6
        C["fct_s"].append(fct)
        C["end_s"].append(C["start_s"][i] + fct)
    n = n_flows + n_done
    info = {
        "flow": list(range(n)),
        "protocol": ["reno"] * n,
        "src": ["h0"] * n,
        "dst": ["h1"] * n,
        "group": ["long"] * n_flows + ["short"] * n_done,
        "start_s": [0.0] * n_flows + C["start_s"],
        "stop_s": [math.nan] * n,
        "size_bytes": [0] * n_flows + C["size_bytes"],
        "rtt_prop_s": [0.1] * n,
    }
    ports = {
        "port": [0, 1, 2],
        "name": ["r0->r1", "r1->r2", "r2->r3"],
        "capacity_bps": [1e7] * 3,
        "delay_s": [0.01] * 3,
        "router": ["droptail"] * 3,
        "limit_pkts": [100] * 3,
        "limit_bytes": [0] * 3,
    }
    summary = {
        "sim_time_s": duration,
        "events": 1000,
        "ports": [
            {
                "port": p,
                "name": ports["name"][p],
                "utilisation": [0.95, 0.3, 0.0][p],
                "mean_queue_pkts": 40.0 * (p == 0),
                "max_queue_pkts": 80 * (p == 0),
                "drop_rate": 0.0,
                "tx_pkts": [1000, 300, 0][p],
                "drops": 0,
                "losses": 0,
                "marks": 0,
            }
            for p in range(3)
        ],
    }
    from racc import summary as sm

    res = Results(
        links=frame("links", L),
        flows=frame("flows", F),
        completions=frame("completions", C),
        flow_info=frame("flow_info", info),
        port_info=frame("port_info", ports),
        summary=summary,
        resolved={"name": name, "duration": duration},
        scenario_text=f'name = "{name}"\n',
        name=name,
    )
    res.summary = sm.build(
        res.summary, links=res.links, flows=res.flows, completions=res.completions, flow_info=res.flow_info
    )
    return res
