"""A stand-in for ``racc._core`` used only by the unit tests (never shipped).

Scenario: ``duration`` (s), ``interval`` (s), ``flows`` = list of tables with optional
``start``, ``stop``, ``size`` (bytes) and ``rate`` (b/s, goodput while active).
Unknown top-level keys are refused like the real engine does.
"""

from __future__ import annotations

import json
import math
import typing

from racc.errors import ScenarioError
from racc.results import TABLES

KNOWN = {"name", "description", "duration", "interval", "seed", "flows", "ports", "interrupt_at"}


def validate(json_text: str, source: str) -> dict:
    data = json.loads(json_text)
    for k in data:
        if k not in KNOWN:
            raise ScenarioError(f"{source}: key `{k}`: unknown key")
    for i, f in enumerate(data.get("flows", [])):
        for k in f:
            if k not in {"protocol", "start", "stop", "size", "rate", "group"}:
                raise ScenarioError(f"{source}: key `flows.{i}.{k}`: unknown key")
    out = {"seed": 1, "duration": 10.0, "interval": 0.5, "flows": [], "ports": 2}
    out.update(data)
    return out


def check(json_text: str, source: str) -> float:
    return float(validate(json_text, source)["duration"])


def list_protocols():
    return [{"name": "reno", "aliases": ["tcp-reno"], "regulation": "window", "description": "TCP Reno"}]


def list_router_modules():
    return [{"name": "droptail", "description": "FIFO"}]


def list_loss_models():
    return [{"name": "uniform", "description": "Bernoulli loss"}]


class _ResolvedScenario:
    """The checked scenario, its JSON text on demand (``_core.ResolvedScenario``)."""

    def __init__(self, sc: dict) -> None:
        self.sc = sc

    def json(self) -> str:
        return json.dumps(self.sc)


class Simulation:
    """Advances a clock; results are synthetic but consistent with the scenario."""

    calls: typing.ClassVar[list] = []

    def __init__(self, json_text: str, source: str):
        self.sc = validate(json_text, source)
        self.now_s = 0.0
        self.end_s = float(self.sc["duration"])
        self.events = 0
        Simulation.calls = []

    def resolved(self) -> _ResolvedScenario:
        return _ResolvedScenario(self.sc)

    def run_until(self, t_s: float) -> bool:
        Simulation.calls.append(t_s)
        ia = self.sc.get("interrupt_at")
        if ia is not None and t_s >= ia:
            raise KeyboardInterrupt
        self.now_s = min(t_s, self.end_s)
        self.events = int(self.now_s * 1000)
        return self.now_s >= self.end_s

    def results(self) -> dict:
        dt, end = float(self.sc["interval"]), self.end_s
        times = [round(dt * (k + 1), 9) for k in range(round(end / dt))]
        flows = self.sc["flows"]
        L = {c: [] for c in TABLES["links"]}
        F = {c: [] for c in TABLES["flows"]}
        comp = {c: [] for c in TABLES["completions"]}
        cap = 10e6
        acked = [0.0] * len(flows)
        done = [False] * len(flows)
        for t in times:
            total = 0.0
            for i, f in enumerate(flows):
                start, stop = f.get("start", 0.0), f.get("stop", math.inf)
                active = start <= t - dt + 1e-9 and t <= stop + 1e-9 and not done[i]
                g = float(f.get("rate", 1e6)) if active else 0.0
                acked[i] += g * dt / 8
                size = f.get("size", 0)
                if size and acked[i] >= size and not done[i]:
                    done[i] = True
                    comp["flow"].append(i)
                    comp["size_bytes"].append(size)
                    comp["start_s"].append(start)
                    comp["end_s"].append(t)
                    comp["fct_s"].append(t - start)
                total += g
                F["time_s"].append(t)
                F["flow"].append(i)
                F["goodput_bps"].append(g)
                F["cwnd_bytes"].append(10000.0 + 100 * i if active else 0.0)
                F["rate_bps"].append(g)
                F["srtt_s"].append(0.1)
                F["acked_bytes"].append(int(acked[i]))
            for p in range(self.sc["ports"]):
                u = min(total / cap, 1.0) if p == 0 else 0.0
                L["time_s"].append(t)
                L["port"].append(p)
                L["name"].append(f"r{p}->r{p + 1}")
                L["tx_bytes"].append(int(u * cap * dt / 8))
                L["tx_pkts"].append(int(u * cap * dt / 8000))
                L["throughput_bps"].append(u * cap)
                L["utilisation"].append(u)
                q = int(50 * u * (1 + math.sin(t)))
                L["queue_pkts"].append(q)
                L["queue_bytes"].append(q * 1000)
                L["drops"].append(1 if u > 0.9 else 0)
                L["losses"].append(0)
                L["marks"].append(0)
                L["arrivals"].append(int(u * cap * dt / 8000) + 1)
        info = {
            "flow": list(range(len(flows))),
            "protocol": [f.get("protocol", "reno") for f in flows],
            "src": ["h0"] * len(flows),
            "dst": ["h1"] * len(flows),
            "group": [f.get("group", "g") for f in flows],
            "start_s": [float(f.get("start", 0.0)) for f in flows],
            "stop_s": [float(f.get("stop", math.nan)) for f in flows],
            "size_bytes": [int(f.get("size", 0)) for f in flows],
            "rtt_prop_s": [0.1] * len(flows),
        }
        ports = {
            "port": [0, 1][: self.sc["ports"]],
            "name": ["r0->r1", "r1->r2"][: self.sc["ports"]],
            "capacity_bps": [cap] * self.sc["ports"],
            "delay_s": [0.01] * self.sc["ports"],
            "router": ["droptail"] * self.sc["ports"],
            "limit_pkts": [100] * self.sc["ports"],
            "limit_bytes": [0] * self.sc["ports"],
        }
        summary = {
            "sim_time_s": end,
            "events": self.events,
            "packet_hops": 1234,
            "delivered_pkts": 1000,
            "sent_pkts": 1010,
            "dropped_pkts": 5,
            "in_flight_pkts": 5,
            "goodput_bytes": int(sum(acked)),
            "sample_interval_s": dt,
            "ports": [
                {
                    "port": p,
                    "name": ports["name"][p],
                    "utilisation": 0.9 if p == 0 else 0.0,
                    "mean_queue_pkts": 12.5 if p == 0 else 0.0,
                    "max_queue_pkts": 80 if p == 0 else 0,
                    "drop_rate": 0.005 if p == 0 else 0.0,
                    "tx_pkts": 1000 if p == 0 else 0,
                    "drops": 5 if p == 0 else 0,
                    "losses": 0,
                    "marks": 0,
                }
                for p in range(self.sc["ports"])
            ],
        }
        return {"links": L, "flows": F, "completions": comp, "flow_info": info, "port_info": ports, "summary": summary}


def bench(
    flows: int, simtime_s: float = 60.0, seed: int = 1, bottleneck_mbps: float = 100.0, access_mbps: float = 1000.0
) -> dict:
    return {
        "bottleneck_mbps": bottleneck_mbps,
        "access_mbps": access_mbps,
        "packet_hops": 20,
        "cpu_s": 0.01,
        "setup_s": 0.001,
        "mhops_per_cpu_s": 0.002,
        "ns_per_hop": 500000.0,
        "events_per_hop": 5.0,
        "bytes_per_flow": 1000.0,
        "sim": "racc",
        "flows": flows,
        "simtime": simtime_s,
        "events": 100,
        "bottleneck_tx_pkts": 10,
        "bottleneck_drops": 0,
        "util": 0.5,
        "goodput_mbps": 5.0,
        "delivered_pkts": 10,
        "link_tx_pkts": 20,
        "wall_s": 0.01,
        "events_per_s": 10000.0,
        "pkthops_per_s": 2000.0,
    }
