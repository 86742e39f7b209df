"""Fat trees side by side with htsim (issue 40): packet-hops per CPU-second, peak memory, per-flow
completion times, link utilisation (every directed link's bytes over the capacity until the last
completion, averaged) and goodput (completed bytes over that time) of the same runs in racc and, when its binary is given, in
htsim's datacenter simulator.

    .venv/bin/python scripts/fat_tree_bench.py                      # k = 8 permutation and incast, 10 Gb/s
    .venv/bin/python scripts/fat_tree_bench.py --k 8,16 --gbps 10,100 --htsim PATH/htsim-fat-tree
    .venv/bin/python scripts/fat_tree_bench.py scenarios/fat-tree-permutation.toml   # shipped files as they are

Each case is one run per simulator on the same htsim connection matrix: `perm` (every host sends
2 MB to another, a random derangement, all at t = 0; at k = 8 the shipped
`scenarios/fat-tree-permutation.cm`) and `incast` (64 hosts outside h0's pod send 1 MB each to h0;
at k = 8 the shipped `fat-tree-incast.cm`), TCP NewReno, htsim's switch queues (12,000-byte buffers
with the random-drop zone of its RandomQueue, router "random-drop") and RTO floor (250 ms), 1 us links, 2 s. racc runs
in a child process per case (its CPU time is the whole `racc.run`: check, build, run, result
tables; its memory the child's peak RSS, and that less the RSS before the run). The htsim side is a
main built against htsim's library (FatTreeTopology, ConnectionMatrix, TcpSrc/TcpSink, as
`sim/datacenter/main_tcp.cpp` with ACKs on the reverse path, flow sizes and starts from the matrix)
that prints `fct src=.. dst=.. size=.. start_ms=.. fct_ms=..` lines and one `sim=htsim` key=value
line with link_tx_pkts, cpu_s and peak_rss_kb (and link_tx_bytes and drops when it counts them
through loggers, which cost it a quarter more CPU: then they are shown); without `--htsim` that side is
skipped with a message. docs/PERFORMANCE.md lists the modelling differences.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {("perm", 8): ROOT / "scenarios" / "fat-tree-permutation.cm", ("incast", 8): ROOT / "scenarios" / "fat-tree-incast.cm"}
DURATION_S = 2.0

SCENARIO = """name = "fat-tree-{case}-k{k}-{gbps}g"
duration = "{duration}s"
seed = 1
packet_size = 1500
# htsim's TCP floor (tcp.cpp: _rto is at least 0.25 s).
min_rto = "250ms"

# htsim's switch queues (FatTreeTopology's RANDOM queues): 8 packets counted in bytes, with the
# RandomQueue's 3-packet zone of random drops below the limit.
[topology]
kind = "fat_tree"
k = {k}
host = {{ capacity = "{gbps}Gbps", buffer = "12000B", router = "random-drop" }}
edge_agg = {{ capacity = "{gbps}Gbps", buffer = "12000B", router = "random-drop" }}
agg_core = {{ capacity = "{gbps}Gbps", buffer = "12000B", router = "random-drop" }}

[[traffic]]
name = "{case}"
kind = "connection_matrix"
file = "{case}.cm"
protocol = "newreno"
src = "h0"
dst = "h1"

[record]
interval = "{duration}s"
ports = []
"""

# The racc child: one run, its figures as one JSON line.
CHILD = r"""
import json, resource, sys, time
import racc
def rss_kb():
    for l in open("/proc/self/status"):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
base = rss_kb()
c0 = time.process_time()
r = racc.run(sys.argv[1])
cpu = time.process_time() - c0
s = r.summary
fct = r.completions.select("flow", "size_bytes", "fct_s").rows()
print(json.dumps({"hops": s["packet_hops"], "cpu_s": cpu, "setup_s": s["run"]["setup_s"], "base_rss_kb": base,
    "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "flows": s["flows"]["count"] if isinstance(s.get("flows"), dict) and "count" in s["flows"] else None,
    "link_bytes": sum(p["tx_bytes"] for p in s["ports"]), "ports": len(s["ports"]),
    "capacity_bps": s["ports"][0]["capacity_bps"], "drops": s["dropped_pkts"], "fct_s": [f[2] for f in fct], "sizes": [f[1] for f in fct]}))
"""


def matrix(case: str, k: int, seed: int = 1) -> str:
    """An htsim connection matrix for `case` on a k-ary fat tree (the shipped file at k = 8)."""
    if (case, k) in SHIPPED:
        return SHIPPED[(case, k)].read_text()
    hosts = k**3 // 4
    rng = random.Random(f"fat-tree-{case}-{k}-{seed}")
    if case == "perm":
        while True:  # a derangement: nobody sends to itself
            dst = list(range(hosts))
            rng.shuffle(dst)
            if all(i != d for i, d in enumerate(dst)):
                break
        lines = [f"{i}->{d} id {i + 1} start 0 size 2000000" for i, d in enumerate(dst)]
    else:
        pod = (k // 2) ** 2  # hosts per pod
        senders = rng.sample(range(pod, hosts), 64)
        lines = [f"{s}->0 id {n + 1} start 0 size 1000000" for n, s in enumerate(senders)]
    return f"Nodes {hosts}\nConnections {len(lines)}\n" + "\n".join(lines) + "\n"


def quantiles(xs: list[float]) -> str:
    if not xs:
        return "-"
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
    return f"{q(0.1) * 1e3:.2f} / {q(0.5) * 1e3:.2f} / {q(0.9) * 1e3:.2f} / {xs[-1] * 1e3:.2f}"


def run_racc(toml: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(toml)], check=False, capture_output=True, text=True, cwd=toml.parent)
    if out.returncode != 0:
        sys.exit(f"racc run of {toml.name} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    makespan = max(d["fct_s"]) if d["fct_s"] else DURATION_S
    d["util"] = d["link_bytes"] * 8 / (d["capacity_bps"] * d["ports"] * makespan)
    d["goodput"] = sum(d["sizes"]) * 8 / makespan
    return d


def run_htsim(binary: str, cm: Path, k: int, gbps: float, ports: int) -> dict:
    cmd = [binary, "-tm", str(cm), "-k", str(k), "-mbps", str(gbps * 1000), "-end_ms", str(DURATION_S * 1000)]
    with tempfile.TemporaryFile() as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        f.seek(0)
        lines = f.read().decode(errors="replace").splitlines()
    kv = [ln for ln in lines if ln.startswith("sim=htsim")]
    if os.waitstatus_to_exitcode(status) != 0 or not kv:
        sys.exit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}, no sim=htsim line")
    d = dict(x.split("=", 1) for x in kv[-1].split())
    fct = [dict(x.split("=", 1) for x in ln.split()[1:]) for ln in lines if ln.startswith("fct ")]
    fct_s = [float(f["fct_ms"]) * 1e-3 for f in fct]
    done_bytes = sum(int(f["size"]) for f in fct)
    makespan = max(fct_s) if fct_s else DURATION_S
    return {
        "hops": int(d["link_tx_pkts"]),
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_rss_kb": int(d["peak_rss_kb"]),
        "fct_s": fct_s,
        # Without -count 1 the htsim main keeps main_tcp's null loggers: no drops or bytes counted.
        "drops": int(d["drops"]) if int(d.get("link_tx_bytes", 0)) else "-",
        "flows": int(d["flows"]),
        "util": int(d.get("link_tx_bytes", 0)) * 8 / (gbps * 1e9 * ports * makespan) or None,
        "goodput": done_bytes * 8 / makespan,
    }


def shipped(files: list[str]) -> None:
    """The shipped scenarios as they are, in this process (the form of the first measurement)."""
    import racc

    for name in files:
        c0 = time.process_time()
        r = racc.run(name)
        cpu = time.process_time() - c0
        s = r.summary
        hops = s["packet_hops"]
        print(
            f"case={name} packet_hops={hops} cpu_s={cpu:.3f} hops_per_cpu_s={hops / cpu:.3e} "
            f"setup_s={s['run']['setup_s']:.3f} peak_rss_mb={s['run']['peak_memory_bytes'] / 2**20:.1f} "
            f"completed={r.completions.height}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*", help="shipped scenario files to time as they are (no comparison)")
    ap.add_argument("--k", default="8", help="fat-tree arities, comma-separated (8: 128 hosts, 16: 1024)")
    ap.add_argument("--gbps", default="10", help="link rates in Gb/s, comma-separated")
    ap.add_argument("--cases", default="perm,incast", help="perm, incast or both")
    ap.add_argument("--htsim", help="the htsim fat-tree main (module doc); skipped when absent")
    a = ap.parse_args()
    if a.scenarios:
        return shipped(a.scenarios)
    try:
        ks = [int(x) for x in a.k.split(",")]
        rates = [float(x) for x in a.gbps.split(",")]
    except ValueError:
        sys.exit("error: --k and --gbps take comma-separated numbers")
    cases = a.cases.split(",")
    if bad := [c for c in cases if c not in ("perm", "incast")] + [k for k in ks if k < 2 or k % 2]:
        sys.exit(f"error: unknown case or odd k: {bad}")
    htsim = a.htsim if a.htsim and shutil.which(a.htsim) else None
    if not htsim:
        print(f"htsim side skipped: {'no --htsim given' if not a.htsim else a.htsim + ' is not an executable'}", file=sys.stderr)
    print("| case | sim | flows done | packet-hops | CPU s | M hops/CPU-s | peak RSS MiB (run's own) | drops | mean link util % | goodput Gb/s | FCT ms p10 / p50 / p90 / max |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="fat-tree-bench-") as tmp:
        for k in ks:
            for g in rates:
                for case in cases:
                    gbps = f"{g:g}"
                    d = Path(tmp) / f"{case}-k{k}-{gbps}g"
                    d.mkdir()
                    (d / f"{case}.cm").write_text(matrix(case, k))
                    (d / "case.toml").write_text(SCENARIO.format(case=case, k=k, gbps=gbps, duration=f"{DURATION_S:g}"))
                    r = run_racc(d / "case.toml")
                    name = f"{case} k={k} {gbps}G"
                    n = len(r["fct_s"])
                    own = (r["peak_rss_kb"] - r["base_rss_kb"]) / 1024
                    print(
                        f"| {name} | racc | {n}/{r['flows'] or n} | {r['hops']} | {r['cpu_s']:.2f} | {r['hops'] / r['cpu_s'] / 1e6:.2f} "
                        f"| {r['peak_rss_kb'] / 1024:.0f} ({own:.0f}) | {r['drops']} | {100 * r['util']:.2f} | {r['goodput'] / 1e9:.2f} | {quantiles(r['fct_s'])} |",
                        flush=True,
                    )
                    if htsim:
                        h = run_htsim(htsim, d / f"{case}.cm", k, g, r["ports"])
                        util = f"{100 * h['util']:.2f}" if h["util"] else "-"
                        print(
                            f"| {name} | htsim | {len(h['fct_s'])}/{h['flows']} | {h['hops']} | {h['cpu_s']:.2f} | {h['hops'] / h['cpu_s'] / 1e6:.2f} "
                            f"| {h['peak_rss_kb'] / 1024:.0f} | {h['drops']} | {util} | {h['goodput'] / 1e9:.2f} | {quantiles(h['fct_s'])} |",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
