"""Every shell example in README.md and ARCHITECTURE.md runs as written (issue 18 item 3), at
reduced scale, in order, in one fresh folder (so `racc plot results/...` finds the run before it).

Reduced scale, and only that, is added to each command: `--quick --cases ...` for `racc reproduce`
(one case, or two of the 44 of mpcp-loss-sweep), `--set duration=2s` for `racc run`/`racc sweep` (FILE is a
shipped scenario), `--flows 1 --simtime 1` for `racc bench`, one seed for `racc crosscheck`
(skipped without ns-2). The setup commands (scripts/setup.sh, scripts/test.sh) are what CI runs
(.ci/run), so they are not run again here; the reproduce after setup.sh is. `sudo racc-live` is
run by the live runtime's own tests (crates/racc-net/tests/live.rs), as root.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import REPO, needs_core

pytestmark = needs_core

DOCS = ["README.md", "ARCHITECTURE.md"]
FILE = "scenarios/dumbbell-newreno-droptail.toml"
LOSS_SWEEP_CASES = "vcp-data-loss0.00,dpcp-data-loss0.00"
#: reproduce examples run their experiment's first case (the cases are alike; the machinery is the same)
FIRST_CASE = {"mpcp-parking-lot": "vcp", "dccp-vcp-t3": "tcp-red", "mpcp-queue": "vcp"}


def shell_examples() -> list[tuple[str, str]]:
    """(document, command) for each command line of each ```bash block, comments removed and
    `&&` chains split."""
    out = []
    for doc in DOCS:
        text = (REPO / doc).read_text(encoding="utf-8")
        for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", text, re.DOTALL):
            for line in block.splitlines():
                cmd = line.split(" # ")[0].split("  #")[0].strip()
                if not cmd or cmd.startswith("#"):
                    continue
                out.extend((doc, part.strip()) for part in cmd.split("&&"))
    return out


def reduced(cmd: str) -> list[str] | None:
    """The command at reduced scale, as argv for `python -m racc`, or None if not run here."""
    words = shlex.split(cmd)
    if words[0] in ("./scripts/setup.sh", "./scripts/test.sh"):
        return None
    if words[:2] == ["sudo", "racc-live"]:
        # The live runtime needs root and its Rust binary; crates/racc-net/tests/live.rs runs
        # racc-live as root in CI (and skips, saying why, elsewhere).
        return None
    if words[0] == "sudo" and len(words) > 2 and words[1].endswith("racc") and words[2] == "kernel":
        # The kernel runtime needs root and minutes of real time; tests/python/test_kernel_run.py
        # and test_kernel_protocols_run.py run `racc kernel run` as root (and skip, saying why, elsewhere).
        return None
    if words[0].endswith("racc"):
        words = words[1:]
    else:
        raise AssertionError(f"unknown kind of example: {cmd}")
    words = [FILE if w == "FILE" else w for w in words]
    sub = words[0]
    if sub == "reproduce" and "--all" in words:
        # Every experiment at once: test_reproduce_all.py runs --all (resuming, refusing other
        # settings, --force) on stand-in experiments, and test_causes.py reproduces each shipped
        # experiment at reduced scale; all 21 again here would double the suite's longest part.
        return None
    if sub == "reproduce" and "--list" not in words:
        words += [] if "--quick" in words else ["--quick"]
        if "--cases" not in words:
            words += ["--cases", LOSS_SWEEP_CASES if "mpcp-loss-sweep" in words else FIRST_CASE[words[1]]]
    elif sub in ("run", "sweep"):
        words += ["--set", "duration=2s"]
    elif sub == "bench":
        words += ["--flows", "1", "--simtime", "1"]
    elif sub == "crosscheck":
        if shutil.which("ns") is None:
            return None
        words += ["--seeds", "1"]
    return words


def test_the_docs_have_examples():
    cmds = [c for _, c in shell_examples()]
    assert any(c.startswith("racc sweep") for c in cmds) and any(c.startswith("racc run") for c in cmds)


def test_every_shell_example_runs(tmp_path, racc_cli):
    ran = []
    for doc, cmd in shell_examples():
        argv = reduced(cmd)
        if argv is None:
            continue
        r = racc_cli(*argv, cwd=tmp_path, timeout=600)
        assert r.returncode == 0, f"{doc}: `{cmd}` (run as racc {' '.join(argv)}) failed:\n{r.stderr[-3000:]}"
        ran.append(cmd)
    assert len(ran) >= 12, ran
    assert (tmp_path / "results" / "sw" / "sweep.parquet").exists()
    assert (tmp_path / "results" / "mpcp-parking-lot" / "claims.json").exists()


def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's Python block, from a folder without scenarios/ (the shipped file is found)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the documentation's own code
    assert (Path(tmp_path) / "results" / "mine" / "summary.json").exists()


def test_readme_error_example_is_what_racc_prints(tmp_path, racc_cli):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (shown,) = [line for line in text.splitlines() if line.startswith("error: scenarios/x.toml")]
    (tmp_path / "scenarios").mkdir()
    src = (REPO / FILE).read_text().replace('capacity = "10Mbps"', 'capacity = "0Mbps"', 1)
    (tmp_path / "scenarios" / "x.toml").write_text(src)
    r = racc_cli("run", "scenarios/x.toml", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == shown


@pytest.mark.parametrize("doc", DOCS)
def test_docs_exist(doc):
    assert (REPO / doc).is_file()
