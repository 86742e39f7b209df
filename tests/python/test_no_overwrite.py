"""Nothing overwritten without --force, and a folder that is not racc's never emptied (issue 37
item 4): --pcap, `racc arrivals --out`, `racc run --out`, `scenario copy`, and a re-run of
`racc reproduce` into a finished folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import needs_core
from racc import cli, manifest
from test_cli import SCEN

FAST = ["--set", "duration=1s", "-q", "--no-plots"]


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    return err


def test_run_out_is_replaced_only_with_force_and_never_a_foreign_folder(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o"]) == 0
    before = (tmp_path / "o" / "summary.json").read_bytes()
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o"]) == 2
    assert "pass --force" in _err(capsys)
    assert (tmp_path / "o" / "summary.json").read_bytes() == before
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o", "--force"]) == 0
    # A results folder the user added a file to is the user's: not even --force empties it.
    (tmp_path / "o" / "notes.txt").write_text("mine")
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o", "--force"]) == 2
    assert "notes.txt" in _err(capsys) and (tmp_path / "o" / "notes.txt").read_text() == "mine"
    # The default results/<stem> is racc's own: a rerun replaces it, but never a user's file there.
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots"]) == 0
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots"]) == 0
    (tmp_path / "results" / "tiny" / "notes.txt").write_text("mine")
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots"]) == 2
    assert "notes.txt" in _err(capsys)


@needs_core
def test_pcap_is_not_overwritten_and_never_replaces_a_directory_or_device(tmp_path, racc_cli):
    cap = tmp_path / "c.pcapng"
    cap.write_bytes(b"precious")
    p = racc_cli("run", "dumbbell-newreno-droptail", "--out", tmp_path / "o", "--pcap", cap, *FAST)
    assert p.returncode == 2 and "--pcap" in p.stderr and "pass --force" in p.stderr
    assert cap.read_bytes() == b"precious" and not (tmp_path / "o").exists()
    p = racc_cli("run", "dumbbell-newreno-droptail", "--out", tmp_path / "o", "--pcap", cap, "--force", *FAST)
    assert p.returncode == 0, p.stderr
    assert cap.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"  # a pcapng section header
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".c.pcapng")]  # no temporary left
    for target, word in ((tmp_path, "a directory"), (Path("/dev/null"), "a character device")):
        p = racc_cli("run", "dumbbell-newreno-droptail", "--out", tmp_path / "o2", "--pcap", target, "--force", *FAST)
        assert p.returncode == 2 and word in p.stderr and len(p.stderr.strip().splitlines()) == 1


@needs_core
def test_arrivals_out_is_not_overwritten(tmp_path, racc_cli):
    out = tmp_path / "a.csv"
    out.write_text("precious")
    p = racc_cli("arrivals", "poisson-pareto-newreno", "--out", out)
    assert p.returncode == 2 and "exists; pass --force" in p.stderr and out.read_text() == "precious"
    p = racc_cli("arrivals", "poisson-pareto-newreno", "--out", out, "--force")
    assert p.returncode == 0 and out.read_text().startswith("start,size,src,dst,protocol\n")


def test_scenario_copy_needs_force_and_never_writes_a_device(tmp_path, capsys):
    dest = tmp_path / "d.toml"
    dest.write_text("precious")
    assert cli.main(["scenario", "copy", "dumbbell-newreno-droptail", str(dest)]) == 2
    assert "pass --force" in _err(capsys) and dest.read_text() == "precious"
    assert cli.main(["scenario", "copy", "dumbbell-newreno-droptail", str(dest), "--force"]) == 0
    assert dest.read_text() != "precious"
    assert cli.main(["scenario", "copy", "dumbbell-newreno-droptail", "/dev/full", "--force"]) == 2
    assert "/dev/full: is a character device, not a regular file" in _err(capsys)


def _finished_reproduction(out: Path, cases=("a", "b")) -> None:
    """A folder as `racc reproduce` leaves it: manifest (complete), claims, report, figures, cases."""
    out.mkdir()
    for c in cases:
        (out / c).mkdir()
        (out / c / "summary.json").write_text(json.dumps({"run": {"format": "racc-results/1"}}))
        (out / c / "links.parquet").write_bytes(b"x")
    (out / "figures").mkdir()
    (out / "figures" / "f.png").write_bytes(b"png")
    (out / "claims.json").write_text("{}")
    (out / "report.html").write_text("<html>")
    doc = {"format": manifest.FORMAT, "kind": "reproduce", "settings": {}, "units": list(cases)}
    (out / manifest.NAME).write_text(json.dumps(doc | {"finished": {c: {} for c in cases}, "complete": True}))


def test_a_finished_reproduction_is_not_mixed_with_a_new_one(tmp_path, capsys):
    out = tmp_path / "exp"
    _finished_reproduction(out)
    # The command refuses before running anything (the experiment's name is a real one).
    name = __import__("racc.experiments", fromlist=["names"]).names()[0]
    assert cli.main(["reproduce", name, "--out", str(out), "--quick"]) == 2
    err = _err(capsys)
    assert "a finished reproduce" in err and "--resume" in err and "--force" in err
    assert sorted(os.listdir(out)) == ["a", "b", "claims.json", "figures", "manifest.json", "report.html"]
    # With force, racc's own files go (the manifest first); then the folder is empty.
    manifest.prepare_fresh(out, "reproduce", force=True)
    assert os.listdir(out) == []


def test_force_never_empties_a_folder_that_is_not_a_reproduction(tmp_path, capsys):
    out = tmp_path / "exp"
    _finished_reproduction(out)
    (out / "thesis.tex").write_text("mine")
    with pytest.raises(Exception, match="thesis.tex"):
        manifest.prepare_fresh(out, "reproduce", force=True)
    assert (out / "claims.json").exists() and (out / "thesis.tex").exists()
    (out / "thesis.tex").unlink()
    (out / "a" / "notes.txt").write_text("mine")  # a case folder the user wrote in
    with pytest.raises(Exception, match="notes.txt"):
        manifest.prepare_fresh(out, "reproduce", force=True)
    assert (out / "a" / "notes.txt").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x").write_text("mine")
    with pytest.raises(Exception, match="not a racc reproduce folder"):
        manifest.prepare_fresh(plain, "reproduce", force=True)
    assert (plain / "x").read_text() == "mine"


def test_a_manifest_says_complete_only_when_closed(tmp_path):
    m = manifest.Manifest(tmp_path, "reproduce", {}, ["a"])
    m.mark("a")
    assert not manifest.is_complete(tmp_path)
    m.close()
    assert manifest.is_complete(tmp_path)
