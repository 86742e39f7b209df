"""Input files read as a careless or hostile user would name them (issue 37 items 1 and 5): a
trace is read only from its scenario's folder (or one allowed with --allow-path), only a regular
file of bounded size is read, and no error message quotes a file's content."""

from __future__ import annotations

import os
import random
import re
import string
from pathlib import Path

import pytest
from conftest import needs_core
from racc import inputs, scenario, trace
from racc.errors import ScenarioError

SECRET = "root:$6$Zq9x2Lk$secretHashValue:19000:0:99999:7:::"

SCENARIO = """
name = "hostile"
duration = "5s"

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "10Mbps", delay = "5ms" }}
access = {{ capacity = "100Mbps", delay = "1ms" }}

[[traffic]]
kind = "trace"
protocol = "reno"
src = "s0"
dst = "d0"
file = "{file}"
"""


def _scenario(folder: Path, file: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "sc.toml"
    p.write_text(SCENARIO.format(file=file))
    return p


def _error(fn) -> str:
    with pytest.raises(ScenarioError) as e:
        fn()
    return str(e.value)


def test_a_trace_outside_the_scenario_folder_is_refused(tmp_path):
    secret = tmp_path / "elsewhere" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    sc = _scenario(tmp_path / "mine", "x.csv")
    for file in (str(secret), "../elsewhere/shadow"):
        msg = _error(lambda f=file: scenario.load(sc, overrides=[f'traffic[0].file="{f}"']))
        assert "outside the scenario file's folder" in msg and "--allow-path" in msg
        assert msg.startswith("--set traffic[0].file=")  # blamed on the argument that named it
        assert "root:" not in msg and "secret" not in msg.replace(str(secret), "")


def test_a_symlink_leading_out_of_the_folder_is_refused(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    sc = _scenario(tmp_path / "mine", "list.csv")
    (tmp_path / "mine" / "list.csv").symlink_to(secret)
    msg = _error(lambda: scenario.load(sc))
    assert "outside the scenario file's folder" in msg and "secretHash" not in msg


def test_allowed_folder_is_read_and_a_non_trace_is_not_quoted(tmp_path, monkeypatch):
    secret = tmp_path / "etc" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\nbin:*:19000:0:99999:7:::\n")
    sc = _scenario(tmp_path / "mine", str(secret))
    monkeypatch.setenv(inputs.ALLOW_ENV, str(secret.parent))
    msg = _error(lambda: scenario.load(sc))
    assert "line 1 is not a trace header" in msg and "names not shown" in msg
    assert "root:" not in msg and "19000" not in msg and "secretHash" not in msg


@needs_core
def test_the_reported_command_no_longer_prints_the_file(tmp_path, racc_cli):
    """`racc run trace-replay --set 'traffic[0].file="/etc/shadow"'` printed shadow's first line."""
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    p = racc_cli("run", "trace-replay", "--set", f'traffic[0].file="{secret}"', "--out", tmp_path / "o", "-q")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert "root:" not in p.stderr and "secretHash" not in p.stderr
    assert "outside the scenario file's folder" in p.stderr
    q = racc_cli(
        "run", "trace-replay", "--set", f'traffic[0].file="{secret}"', "--allow-path", tmp_path, "--out", tmp_path / "o"
    )
    assert q.returncode == 2 and "not a trace header" in q.stderr and "root:" not in q.stderr


@pytest.mark.parametrize("what", ["fifo", "dir", "device"])
def test_non_regular_trace_files_are_refused_before_any_read(tmp_path, monkeypatch, what):
    folder = tmp_path / "mine"
    folder.mkdir()
    if what == "fifo":
        os.mkfifo(folder / "list.csv")  # opening it for reading would block forever
        file, word = "list.csv", "a FIFO"
    elif what == "dir":
        (folder / "list.csv").mkdir()
        file, word = "list.csv", "a directory"
    else:
        monkeypatch.setenv(inputs.ALLOW_ENV, "/dev")
        file, word = "/dev/zero", "a character device"
    sc = _scenario(folder, file)
    msg = _error(lambda: scenario.load(sc))
    assert f"is {word}, not a regular file" in msg and file in msg


@pytest.mark.parametrize("what", ["fifo", "/dev/zero", "dir"])
def test_non_regular_scenario_files_are_refused_at_once(tmp_path, racc_cli, what):
    if what == "fifo":
        target = tmp_path / "s.toml"
        os.mkfifo(target)
    elif what == "dir":
        target = tmp_path / "d.toml"
        target.mkdir()
    else:
        target = Path(what)
    p = racc_cli("run", target, "--out", tmp_path / "o", timeout=60)
    assert p.returncode == 2, p.stderr
    assert "not a regular file" in p.stderr and str(target) in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_files_above_the_bound_are_refused_from_their_size(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_SCENARIO_BYTES", 1000)
    monkeypatch.setattr(inputs, "MAX_TRACE_BYTES", 1000)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 2000 + "\n")
    assert "is more than a scenario file may hold (1000 B)" in _error(lambda: scenario.load(big))
    (tmp_path / "list.csv").write_text("start,size\n" + "0.5,960\n" * 200)
    sc = _scenario(tmp_path, "list.csv")
    assert "is more than a trace may hold (1000 B)" in _error(lambda: scenario.load(sc))


def test_unknown_columns_and_bad_values_are_described_not_quoted(tmp_path):
    (tmp_path / "list.csv").write_text("start,size,apiToken\n0.5,960,x\n")
    msg = _error(lambda: trace.read("sc.toml", "k", "list.csv", tmp_path))
    assert "column 3 of 3 is not one of start, size" in msg and "apiToken" not in msg
    (tmp_path / "list.csv").write_text("start,size\n0.5,960\nhunter2pass,960\n")
    msg = _error(lambda: trace.read("sc.toml", "k", "list.csv", tmp_path))
    assert "line 3, column `start`: not a number" in msg and "hunter2" not in msg


def test_a_ragged_row_is_named_by_its_line(tmp_path):
    (tmp_path / "list.csv").write_text("start,size\n0.5,960\n1.0,960\n1.5,960,extra\n")
    msg = _error(lambda: trace.read("sc.toml", "k", "list.csv", tmp_path))
    assert "line 4: 3 fields, but the header has 2" in msg and "extra" not in msg


# --- the property: no error message quotes an input file --------------------------------------

_WORDS = ["start", "size", "src", "dst", "protocol", "columns", "column", "line", "number", "trace", "file"]
_LINES = [
    "root:x:0:0:root:/root:/bin/bash",
    'NAME="Ubuntu" VERSION_ID="24.04"',
    "ghp_{token}",
    "password = \"{token}\"",
    "[topology]\nkind = \"{token}\"",
    "start,size,{token}",
    "{token},size",
    "start;size\n{token};1",
    "start,size\n{token},960",
    "start,size\n0.5,{token}",
    "start,size\n0.5,960,{token}",
    "\x1b[31m{token}\x1b[0m",
    "{{{{{{{token}",
]


def _content(rng: random.Random) -> bytes:
    """Random lines that look like secrets, TOML, CSV headers and rows, or random bytes."""
    if rng.random() < 0.15:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    lines = []
    for _ in range(rng.randrange(1, 6)):
        token = "".join(rng.choice(string.ascii_letters + string.digits + "_-.") for _ in range(rng.randrange(6, 30)))
        lines.append(rng.choice(_LINES).format(token=token))
    return ("\n".join(lines) + rng.choice(["", "\n"])).encode()


def _leaks(message: str, content: bytes, allowed: list[str]) -> list[str]:
    """4-byte pieces of ``content`` in ``message``, apart from the words the message uses on purpose."""
    text = message
    for word in sorted(allowed, key=len, reverse=True):
        text = text.replace(word, " ")
    return [
        piece
        for i in range(len(content) - 3)
        if (piece := content[i : i + 4].decode("utf-8", "replace")) in text and piece.strip() == piece
    ]


@pytest.mark.parametrize("suffix", ["csv", "parquet", "toml"])
def test_no_error_message_quotes_the_file(tmp_path, suffix):
    rng = random.Random(37)
    for n in range(150):
        folder = tmp_path / f"case{n}"
        folder.mkdir()
        content = _content(rng)
        name = "s.toml" if suffix == "toml" else f"list.{suffix}"
        (folder / name).write_bytes(content)
        try:
            if suffix == "toml":
                scenario.load(folder / name)
            else:
                trace.read("sc.toml", "traffic[0].file", name, folder)
        except ScenarioError as exc:
            msg = str(exc)
        else:
            continue  # content that happens to be valid: nothing to say
        allowed = [str(folder), str(tmp_path), f"list.{suffix}", "s.toml", *_WORDS, "TOML", "UTF-8"]
        if suffix == "toml":  # a table's or key's name is named on purpose (`Cannot declare ('k',) twice`)
            allowed += re.findall(r"['`]([A-Za-z0-9_-]+)['`]", msg)
        leaks = _leaks(msg, content, allowed)
        leaks = [x for x in leaks if not re.fullmatch(r"[\d., ]+", x)]  # byte offsets, line numbers
        assert not leaks, (content, msg, leaks)


@pytest.mark.parametrize("command", [["sweep"], ["arrivals", "--out", "a.csv"], ["crosscheck", "ns2"]])
def test_every_command_refuses_a_fifo_scenario_before_reading_it(tmp_path, monkeypatch, capsys, command):
    from racc import cli

    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "s.toml")
    argv = [command[0], *command[1:2], "s.toml", *command[2:]] if command[0] == "crosscheck" else [
        command[0], "s.toml", *command[1:]
    ]
    assert cli.main(argv) == 2
    assert "s.toml: is a FIFO, not a regular file" in capsys.readouterr().err


def test_a_manifest_that_is_a_fifo_is_not_read(tmp_path):
    from racc import manifest

    os.mkfifo(tmp_path / manifest.NAME)
    assert not manifest.is_complete(tmp_path)
