"""One baselines case on Linux's own controllers: ``racc kernel run SCENARIO --cc cubic|bbr``.

The case's scenario (``Case.scenario``) is written as TOML and run by the kernel runtime as it is
(docs/KERNEL.md: namespaces, htb + pfifo at each port, the delay line where the kernel has no
netem), in a child process, so that its namespaces and janitor are its own. Linux's DCTCP is not
run: this kernel builds in reno, cubic and bbr only (no ``tcp_dctcp``) and has no qdisc that
marks on the instantaneous queue (no sch_red, fq_codel or netem either). A BPF struct_ops
DCTCP (the kernel selftests' ``bpf_dctcp.c``) would be a re-implementation loaded into the
kernel, not Linux's own ``tcp_dctcp.c``, and it would still need a BPF step marker at the
bottleneck: a third implementation, not a reference, so it is not used as one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from racc.crosscheck.baselines import Case
from racc.crosscheck.baselines_measure import Series

#: Linux's own controllers the kernel runtime can run (python/racc/kernel/plan.py CC_CHOICES).
LINUX_CC = {"cubic": "cubic", "bbr": "bbr"}


def available() -> str | None:
    """None if ``racc kernel run`` can run here, else why not (one line)."""
    if os.geteuid() != 0:
        return "the kernel runtime needs root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"the kernel runtime needs {tool} (iproute2)"
    return None


def supports(protocol: str) -> str | None:
    """None if Linux's own controller for ``protocol`` runs here, else why not."""
    if protocol in LINUX_CC:
        return None
    if protocol == "dctcp":
        return "this kernel has no tcp_dctcp and no step-marking qdisc (a BPF DCTCP would not be Linux's own)"
    return f"no Linux controller for {protocol}"


def toml(value: Any, inline: bool = False) -> str:
    """The small TOML subset a case's scenario uses (strings, numbers, booleans, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v, True) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml(v, True)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def scenario_toml(data: dict[str, Any]) -> str:
    lines = []
    for k, v in data.items():
        if isinstance(v, dict):
            continue
        if isinstance(v, list) and v and isinstance(v[0], dict):
            continue
        lines.append(f"{k} = {toml(v)}")
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"\n[{k}]")
            lines += [f"{kk} = {toml(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                lines.append(f"\n[[{k}]]")
                lines += [f"{kk} = {toml(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


def run(case: Case, seed: int, keep: Path | None = None) -> tuple[Series, dict[str, Any]]:
    """Run ``case`` on Linux's own controller; its samples and the run's ``kernel`` summary."""
    from racc.results import load

    why = supports(case.protocol)
    if why:
        raise RuntimeError(why)
    work = Path(tempfile.mkdtemp(prefix="racc-baselines-"))
    try:
        scen = work / f"{case.name}.toml"
        scen.write_text(scenario_toml(case.scenario(seed)), encoding="utf-8")
        out = keep or work / "out"
        env = dict(os.environ)
        env.setdefault("RACC_KERNEL_TAG", "xcheck")  # in every name the run creates
        cmd = [sys.executable, "-m", "racc", "kernel", "run", str(scen), "--cc", LINUX_CC[case.protocol]]
        cmd += ["--out", str(out), "--force", "--no-plots", "-q"]
        p = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise RuntimeError(f"racc kernel run {case.name} exited {p.returncode}: {tail[0]}")
        res = load(out)
        return series(res, case), dict(res.summary.get("kernel") or {})
    finally:
        shutil.rmtree(work, ignore_errors=True)


def series(res: Any, case: Case) -> Series:
    """The kernel run's samples as a ``Series`` (TCP_INFO per flow, the bottleneck's pfifo)."""
    import polars as pl

    f = res.flows.sort("time_s")
    links = res.links.filter(pl.col("name") == "r0->r1").sort("time_s")
    w0, w1 = case.window
    inside = links.filter((pl.col("time_s") > w0) & (pl.col("time_s") <= w1 + 1e-9))
    return Series(
        f["time_s"].to_list(),
        f["flow"].to_list(),
        f["acked_bytes"].cast(pl.Float64).to_list(),
        f["cwnd_bytes"].to_list(),
        f["pacing_bps"].to_list() if "pacing_bps" in f.columns else [0.0] * f.height,
        f["retransmits"].cast(pl.Float64).to_list() if "retransmits" in f.columns else [0.0] * f.height,
        links["time_s"].to_list(),
        links["queue_pkts"].cast(pl.Float64).to_list(),
        float(inside["drops"].sum()),
    )
