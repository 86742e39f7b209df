"""Today's baselines against their references (issue 41 item 2): the dumbbell cases.

One case is a protocol (CUBIC, BBR or DCTCP), a bottleneck rate, the flows' round-trip times and
a duration. Every engine gets the same case: racc as a scenario (``scenario``), Linux through
``racc kernel run`` on the same scenario, ns-3 through ``ns3_dumbbell`` from the same numbers.

The dumbbell: sender *i* reaches router r0 over an access link of 10x the bottleneck's rate whose
one-way delay is half its RTT, r0 -> r1 is the bottleneck (no delay), r1 reaches the receivers
over access links of no delay. All the propagation delay is on one link per direction, so the
kernel's delay line (docs/KERNEL.md) carries each frame once. Packets are 1500 bytes on the wire
(MSS 1460: no TCP options, timestamps off in the kernel and ns-3), the buffer is one BDP of the
flows' mean RTT in packets, IW 10 (Linux's), min RTO 200 ms, SACK on, an ACK per segment.
DCTCP runs over step marking with K = max(BDP / 7, 5) packets (the DCTCP paper's K > C·RTT/7,
§3.4), ECN on; CUBIC and BBR over DropTail.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any

PACKET = 1500  # wire bytes (IPv4 + TCP + 1460 payload)
HEADERS = 40
PROTOCOLS = ("cubic", "bbr", "dctcp")


@dataclass(frozen=True)
class Case:
    """One dumbbell case (see the module doc)."""

    protocol: str
    rate_mbps: float
    rtts_ms: tuple[float, ...]
    duration_s: float
    spread_s: float = 1.0  # flows start uniformly in [0, spread) s, drawn from the seed

    @property
    def flows(self) -> int:
        return len(self.rtts_ms)

    @property
    def name(self) -> str:
        lo, hi = min(self.rtts_ms), max(self.rtts_ms)
        rtt = f"{lo:g}ms" if lo == hi else f"{lo:g}-{hi:g}ms"
        return f"{self.protocol}-{self.rate_mbps:g}M-{rtt}-{self.flows}f"

    @property
    def window(self) -> tuple[float, float]:
        """Seconds compared: the last two thirds (start-up and the first CUBIC epoch left out)."""
        return (round(self.duration_s / 3, 3), self.duration_s)

    @property
    def buffer_pkts(self) -> int:
        mean_rtt = sum(self.rtts_ms) / len(self.rtts_ms) / 1e3
        return max(10, round(self.rate_mbps * 1e6 * mean_rtt / (8 * PACKET)))

    @property
    def k_pkts(self) -> int:
        return max(5, round(self.buffer_pkts / 7))

    @property
    def access_mbps(self) -> float:
        return 10 * self.rate_mbps

    @property
    def router(self) -> str:
        return "step" if self.protocol == "dctcp" else "droptail"

    def starts(self, seed: int) -> list[float]:
        """Each flow's start (s), the same in every engine for one seed."""
        rng = random.Random(f"baselines-{seed}")
        return [round(rng.uniform(0, self.spread_s), 6) for _ in self.rtts_ms]

    def interval_s(self) -> float:
        """Sample interval: 50 ms catches BBR's 200 ms PROBE_RTT; coarser on long runs."""
        return 0.05 if self.duration_s <= 120 else 0.1

    def scenario(self, seed: int = 1) -> dict[str, Any]:
        """The racc scenario (also what ``racc kernel run`` is given)."""
        router_params = {"k_pkts": self.k_pkts} if self.protocol == "dctcp" else {}
        tcp: dict[str, Any] = {"initial_window": 10, "sack": True}
        if self.protocol == "dctcp":
            tcp["ecn"] = True
        bottleneck: dict[str, Any] = {
            "capacity": f"{self.rate_mbps:g}Mbps",
            "delay": "0ms",
            "buffer": self.buffer_pkts,
            "router": self.router,
        }
        if router_params:
            bottleneck["router_params"] = router_params
        return {
            "name": f"baselines-{self.name}",
            "duration": f"{self.duration_s:g}s",
            "seed": seed,
            "packet_size": PACKET,
            "min_rto": "200ms",
            "topology": {
                "kind": "dumbbell",
                "pairs": self.flows,
                "bottleneck": bottleneck,
                "access": {"capacity": f"{self.access_mbps:g}Mbps", "delay": "0ms"},
                "access_delays": [f"{r / 2:g}ms" for r in self.rtts_ms],
            },
            "flows": [
                {
                    "name": f"f{i}",
                    "protocol": self.protocol,
                    "src": f"s{i}",
                    "dst": f"d{i}",
                    "start": f"{t:g}s",
                    **tcp,
                }
                for i, t in enumerate(self.starts(seed))
            ],
            "record": {"interval": f"{self.interval_s() * 1e3:g}ms", "flows": True},
        }


def spread_rtts(n: int, lo: float = 20.0, hi: float = 200.0) -> tuple[float, ...]:
    """``n`` RTTs evenly from ``lo`` to ``hi`` ms (one: ``lo``)."""
    if n == 1:
        return (lo,)
    return tuple(round(lo + (hi - lo) * i / (n - 1), 3) for i in range(n))


def duration_for(rate_mbps: float, rtts: tuple[float, ...]) -> float:
    """Long enough for several CUBIC epochs (K = cbrt(W_max·β/C) s grows with the BDP) and several
    BBR PROBE_RTT cycles (one each 10 s), short enough for ns-3 at 1 Gb/s."""
    if rate_mbps >= 1000:
        return 30.0
    if rate_mbps >= 100:
        return 60.0 if max(rtts) > 50 else 30.0
    return 60.0 if max(rtts) > 50 else 30.0


def matrix(protocols: tuple[str, ...] = PROTOCOLS, rates: tuple[float, ...] = (10, 100, 1000)) -> list[Case]:
    """The full matrix: each protocol at each rate with one flow at 20 ms, one at 200 ms and ten
    flows spread over 20-200 ms (issue 41 item 2)."""
    out = []
    for p in protocols:
        for r in rates:
            for rtts in ((20.0,), (200.0,), spread_rtts(10)):
                out.append(Case(p, float(r), rtts, duration_for(r, rtts)))
    return out


def quick() -> list[Case]:
    """The reduced scale the tests run: 10 Mb/s, one flow at 20 ms and four over 20-80 ms, 20 s."""
    out = []
    for p in PROTOCOLS:
        out.append(Case(p, 10.0, (20.0,), 20.0))
        out.append(Case(p, 10.0, spread_rtts(4, 20.0, 80.0), 20.0))
    return out


def parse(text: str) -> Case:
    """``PROTO-RATEM-RTTms-Nf`` (``cubic-10M-20ms-1f``, ``bbr-100M-20-200ms-10f``) as a case; the
    duration is ``duration_for``'s unless ``@SECONDS`` follows (``cubic-10M-20ms-1f@20``)."""
    body, _, dur = text.partition("@")
    parts = body.split("-")
    try:
        proto, rate, *rtt, flows = parts
        if proto not in PROTOCOLS or not rate.endswith("M") or not flows.endswith("f"):
            raise ValueError
        n = int(flows[:-1])
        r = float(rate[:-1])
        rtt_txt = "-".join(rtt).removesuffix("ms")
        lo, _, hi = rtt_txt.partition("-")
        rtts = spread_rtts(n, float(lo), float(hi or lo)) if n > 1 else (float(lo),)
        if n < 1 or r <= 0 or min(rtts) <= 0:
            raise ValueError
        case = Case(proto, r, rtts, duration_for(r, rtts))
        return replace(case, duration_s=float(dur)) if dur else case
    except ValueError:
        raise ValueError(
            f"case {text!r}: expected PROTO-RATEM-RTTms-Nf (PROTO one of {', '.join(PROTOCOLS)}),"
            " e.g. cubic-10M-20ms-1f or bbr-100M-20-200ms-10f, optionally @SECONDS"
        ) from None
