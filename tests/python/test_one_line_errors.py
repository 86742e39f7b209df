"""Every failure of input or environment is one `error:` line naming the file or argument and
the reason, never a traceback (issue 37 items 6 and 7)."""

from __future__ import annotations

import errno
import json

import pytest
from conftest import needs_core
from one_line import refused_in_process
from racc import cli, scenario
from racc.errors import ScenarioError
from test_cli import SCEN


def _one_line(capsys, status, got, *fragments) -> str:
    return refused_in_process(capsys, got, *fragments, status=status)


@pytest.mark.parametrize(
    ("code", "reason"),
    [(errno.EACCES, "permission denied"), (errno.EROFS, "the file system is read-only"), (errno.ENOSPC, "no space left")],
)
def test_write_failures_name_the_folder(tmp_path, monkeypatch, capsys, fake, code, reason):
    """A read-only --out, a full disk: the OS error while writing the results becomes one line
    naming the folder (not racc's hidden temporary)."""
    import racc.results

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)

    def refuse(path, *a, **k):
        raise OSError(code, "x", str(tmp_path / f".o.tmp-{__import__('os').getpid()}-0a1b2c3d"))

    monkeypatch.setattr(racc.results, "atomic_dir", refuse)
    got = cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o"])
    _one_line(capsys, 1, got, f"{tmp_path / 'o'}: {reason}")


def test_mount_point_out_is_refused_before_the_run(tmp_path, monkeypatch, capsys, fake):
    import os.path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    (tmp_path / "m").mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda p: str(p).endswith("m"))
    got = cli.main(["run", "tiny.toml", "-q", "--out", "m"])
    _one_line(capsys, 2, got, "--out m: is a mount point")


def test_pcap_into_a_read_only_folder_is_refused_before_the_run(tmp_path, monkeypatch, capsys, fake):
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(os, "access", lambda p, mode: not str(p).endswith("ro"))
    got = cli.main(["run", "tiny.toml", "-q", "--pcap", "ro/c.pcapng"])
    _one_line(capsys, 2, got, "--pcap ro/c.pcapng: cannot write in", "read-only or no permission")


def test_corrupt_parquet_in_plot(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)
    assert cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o"]) == 0
    (tmp_path / "o" / "links.parquet").write_bytes(b"PAR1 not really parquet; api_key=abcdef123456")
    got = cli.main(["plot", "o"])
    line = _one_line(capsys, 2, got, "links.parquet: not a readable Parquet file")
    assert "abcdef" not in line


def test_reproduce_out_pointing_at_a_file(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    from racc import experiments

    for extra in ([], ["--resume"]):
        got = cli.main(["reproduce", experiments.names()[0], "--out", str(f), *extra])
        _one_line(capsys, 2, got, f"--out {f}: exists and is not a folder")


def test_unreachable_scheduler_is_one_line(tmp_path, racc_cli):
    pytest.importorskip("distributed")
    p = racc_cli("sweep", "dumbbell-newreno-droptail", "--scheduler", "tcp://127.0.0.1:9", timeout=120)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()  # after the sweep's one line of what it is about to run
    assert "Traceback" not in p.stderr and [x for x in lines if x.startswith("error:")] == lines[-1:], p.stderr
    assert lines[-1].startswith("error: --scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler"), p.stderr


def test_deeply_nested_toml(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n")
    got = cli.main(["run", str(deep)])
    _one_line(capsys, 2, got, "deep.toml: TOML nested too deeply")
    deep.write_text("a = " + "{b = " * 40 + "1" + "}" * 40 + "\n")
    with pytest.raises(ScenarioError, match="nested too deeply"):
        scenario.load(deep)
    with pytest.raises(ScenarioError, match="^--set: a value nested too deeply"):
        scenario.load("a = 1", overrides=["x=" + "{b = " * 3000 + "1" + "}" * 3000])


# --- item 7 ------------------------------------------------------------------------------------


def test_set_and_seed_errors_blame_the_argument(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('name = "s"\nduration = 4.0\n')
    with pytest.raises(ScenarioError) as e:
        scenario.load(sc, overrides=["duration=" + "9" * 301]).engine_inputs()
    assert str(e.value).startswith("--set duration=") and "301 digits is out of range" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        scenario.load(sc, seed=10**30).engine_inputs()
    assert str(e.value).startswith(f"--seed {10**30}: ") and "(scenario " in str(e.value)


def test_numbers_of_301_digits_are_refused(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text("duration = " + "1" * 301 + "\n")
    with pytest.raises(ScenarioError, match=r"s.toml: key `duration`: an integer of 301 digits is out of range"):
        scenario.load(sc).engine_inputs()


def test_duplicate_group_names_are_refused(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('[[flows]]\nname = "web"\n[[traffic]]\nname = "bulk"\n[[traffic]]\nname = "web"\n')
    with pytest.raises(ScenarioError, match=r"key `traffic\[1\].name`: group name 'web' is also flows\[0\]'s"):
        scenario.load(sc)


def test_node_names_with_an_arrow_are_refused(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('[topology]\nkind = "explicit"\nnodes = [{name = "a"}, {name = "a->b"}]\n')
    with pytest.raises(ScenarioError, match=r"key `topology.nodes\[1\].name`: must not contain `->`"):
        scenario.load(sc)


def test_a_path_holding_an_equals_sign_is_a_file(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rate=2.toml").write_text(SCEN)
    assert cli.main(["run", "rate=2.toml", "-q", "--no-plots", "--out", "o"]) == 0
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["run"]["scenario"] == "tiny"
    assert scenario.looks_like_path(str(tmp_path / "rate=2.toml"))
    assert not scenario.looks_like_path("a = 1")


def test_control_characters_of_a_name_never_reach_the_terminal(tmp_path, monkeypatch, capsys, fake):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN.replace('name = "tiny"', 'name = "x\\u001b[2J\\ny"'))
    assert cli.main(["run", "tiny.toml", "--no-plots", "--out", "o"]) == 0
    out = capsys.readouterr()
    assert "\x1b[2J" not in out.out + out.err and "x\\x1b[2J\\ny" in out.out
    (tmp_path / "bad.toml").write_text('name = "x\\u001b[2J"\nbogus = 1\n')
    assert cli.main(["run", "bad.toml", "--out", "o2"]) == 2
    assert "\x1b" not in capsys.readouterr().err


@needs_core
def test_a_ragged_trace_row_is_named_by_its_line_end_to_end(tmp_path, racc_cli):
    from test_hostile_input import _scenario

    sc = _scenario(tmp_path, "list.csv")
    (tmp_path / "list.csv").write_text("start,size\n0.5,960\n1,960,9\n")
    p = racc_cli("run", sc, "--out", tmp_path / "o", "-q")
    assert p.returncode == 2 and "list.csv: line 3: 3 fields, but the header has 2" in p.stderr


def test_a_full_disk_while_writing_a_table_names_the_table(tmp_path, monkeypatch, capsys, fake):
    """polars wraps the OS error (`... (os error 28)`); the line names the table being written."""
    import polars as pl

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(SCEN)

    def full(self, path, *a, **k):
        raise pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    got = cli.main(["run", "tiny.toml", "-q", "--no-plots", "--out", "o"])
    _one_line(capsys, 1, got, "o/links.parquet: no space left on the device")
    assert not (tmp_path / "o").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".o.")]
