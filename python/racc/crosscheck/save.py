"""The crosscheck folder, written atomically as results.py writes a run's:

crosscheck.json      scenario, seeds, window, versions and the comparison rows (written last)
comparison.parquet   one row per metric: both sides' seed means, ranges and the verdict
values.parquet       every metric of every seed and side
report.html          the table, what was matched, every seed, the ns-2 script
seed-N/racc/         racc's results folder for seed N
seed-N/ns2/          ns-2's counters as a racc results folder, plus ns2.tcl and ns.log
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from racc import results as _results
from racc.crosscheck import report
from racc.errors import ResultsError

FORMAT = "racc-crosscheck/1"


def is_crosscheck_dir(p: Path) -> bool:
    try:
        d = json.loads((p / "crosscheck.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(d, dict) and str(d.get("format", "")).startswith("racc-crosscheck/")


def check_replaceable(dest: Path) -> None:
    """Refuse to replace anything but an empty folder or an earlier crosscheck folder."""
    if not dest.exists() and not dest.is_symlink():
        return
    if not dest.is_dir() or dest.is_symlink():
        raise ResultsError(f"{dest}: exists and is not a directory; refusing to overwrite it")
    if any(dest.iterdir()) and not is_crosscheck_dir(dest):
        raise ResultsError(f"{dest}: exists and is not a racc crosscheck folder; refusing to overwrite it")


def save(cc: Any, out: str | os.PathLike) -> Path:
    """Write ``cc`` (a :class:`racc.crosscheck.run.Crosscheck`) to ``out``, replacing it only when complete."""
    import racc

    dest = Path(os.path.abspath(out))
    check_replaceable(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _results._fresh_sibling(dest, "tmp")
    try:
        for r, n in cc.sides:
            seed_dir = tmp / f"seed-{r.seed}"
            r.res.save(seed_dir / "racc")
            n.res.save(seed_dir / "ns2")
            (seed_dir / "ns2" / "ns2.tcl").write_text(cc.scripts[r.seed], encoding="utf-8")
            (seed_dir / "ns2" / "ns.log").write_text(cc.logs[r.seed], encoding="utf-8")
        cc.comparison.write_parquet(tmp / "comparison.parquet")
        cc.values.write_parquet(tmp / "values.parquet")
        report.write_html(cc, tmp / "report.html", racc.__version__)
        doc = {
            "format": FORMAT,
            "scenario": cc.scenario,
            "source": cc.source,
            "seeds": cc.seeds,
            "window_s": list(cc.window),
            "sample_interval_s": cc.interval_s,
            "racc_version": racc.__version__,
            "ns_version": cc.ns_version,
            "agreement": report.RULE,
            "rows": cc.comparison.to_dicts(),
        }
        (tmp / "crosscheck.json").write_text(json.dumps(_results._clean(doc), indent=2) + "\n", encoding="utf-8")
        check_replaceable(dest)  # again: it may have changed while we were writing
        _results._replace_dir(tmp, dest, check=False)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
