"""racc works from any folder (issue 18 item 2): the scenarios and experiments ship inside the
package, `racc run` of a shipped scenario and `racc reproduce` need no checkout, and
`racc scenario copy` gives the user a file to edit."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, needs_core


def test_scenarios_are_shipped_in_the_package_and_the_checkout_links_to_them():
    import racc
    from racc import catalog

    pkg = Path(racc.__file__).resolve().parent
    assert catalog.SHIPPED == pkg / "scenarios"
    names = catalog.shipped_names()
    assert "dumbbell-newreno-droptail" in names and "mpcp-parking-lot" in names
    # One source: the checkout's scenarios/ is the package's folder, not a copy.
    assert (REPO / "scenarios").resolve() == (REPO / "python" / "racc" / "scenarios").resolve()


def test_every_experiment_case_uses_a_shipped_scenario(tmp_path, monkeypatch):
    """A scenarios/ folder in the current directory does not change what an experiment runs."""
    from racc import catalog, experiments
    from racc.experiments.base import scenario_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "mpcp-queue.toml").write_text("name = 'not the shipped one'\n")
    for name in experiments.names():
        for case in experiments.get(name).cases:
            assert scenario_path(case).parent == catalog.SHIPPED, (name, case.name)


def test_scenario_copy_list_show(tmp_path, racc_cli):
    r = racc_cli("scenario", "list", cwd=tmp_path)
    assert r.returncode == 0 and "dumbbell-newreno-droptail" in r.stdout
    r = racc_cli("scenario", "copy", "dumbbell-newreno-droptail", "mine.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "racc run mine.toml" in r.stdout
    shipped = (REPO / "scenarios" / "dumbbell-newreno-droptail.toml").read_text()
    assert (tmp_path / "mine.toml").read_text() == shipped
    r = racc_cli("scenario", "copy", "dumbbell-newreno-droptail", "mine.toml", cwd=tmp_path)
    assert r.returncode == 2 and "exists" in r.stderr and "--force" in r.stderr
    r = racc_cli("scenario", "copy", "no-such", "x.toml", cwd=tmp_path)
    assert r.returncode == 2 and "no shipped scenario 'no-such'" in r.stderr
    r = racc_cli("scenario", "show", "vcp-dumbbell", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == (REPO / "scenarios" / "vcp-dumbbell.toml").read_text()


@needs_core
def test_run_shipped_scenario_from_any_folder(tmp_path, racc_cli):
    """By name and by the README's `scenarios/NAME.toml` path, in a folder with no scenarios/."""
    for i, spec in enumerate(("dumbbell-newreno-droptail", "scenarios/dumbbell-newreno-droptail.toml")):
        r = racc_cli("run", spec, "--set", "duration=2s", "--no-plots", "-q", "--out", f"r{i}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / f"r{i}" / "summary.json").exists()


@needs_core
def test_reproduce_from_any_folder(tmp_path, racc_cli):
    r = racc_cli("reproduce", "xcc-single", "--quick", "--out", "x", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "x" / "claims.json").read_text())
    assert data["cases_run"] and data["claims"]
