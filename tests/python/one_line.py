"""The one ``error:`` line every refused ``racc`` command writes (DEVELOPERS.md: bad input gets a
one-line error), checked the same way by every test: exactly one line on stderr, starting
``error: ``, no traceback, holding each given fragment."""

from __future__ import annotations

import subprocess


def error_line(stderr: str, *fragments: str, stdout: str = "") -> str:
    """The single ``error:`` line of ``stderr``, after checking it holds every fragment."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr + stdout, stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def refused(p: subprocess.CompletedProcess, *fragments: str, status: int = 2) -> str:
    """A finished ``racc`` process that exited ``status`` with one ``error:`` line."""
    assert p.returncode == status, (p.stdout, p.stderr)
    return error_line(p.stderr, *fragments, stdout=p.stdout)


def refused_in_process(capsys, got: int, *fragments: str, status: int = 2) -> str:
    """``racc.cli.main``'s exit status ``got`` is ``status`` and stderr (captured by pytest's
    ``capsys``) is one ``error:`` line."""
    err = capsys.readouterr().err
    assert got == status, err
    return error_line(err, *fragments)
