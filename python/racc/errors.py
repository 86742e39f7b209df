"""Exception types of the front end.

``ScenarioError`` is the engine's own class when ``racc._core`` is built, so one
``except racc.ScenarioError`` catches errors raised by Rust and by Python alike.
"""

from __future__ import annotations

try:  # pragma: no cover - depends on whether the extension is built
    from racc._core import ScenarioError
except ImportError:  # pragma: no cover

    class ScenarioError(ValueError):  # type: ignore[no-redef]
        """A scenario (file, text or override) is invalid; the message names source, key and reason."""


class ResultsError(Exception):
    """A results folder is missing, incomplete, or would overwrite something that is not one."""


class CoreUnavailable(ImportError):
    """The compiled engine ``racc._core`` cannot be imported."""


def core():
    """Import and return ``racc._core``, or raise :class:`CoreUnavailable` with a helpful message."""
    try:
        from racc import _core
    except ImportError as exc:
        raise CoreUnavailable(
            f"the simulator extension racc._core is not built ({exc}); "
            "build it with `maturin develop --release` (or `pip install .`)"
        ) from exc
    return _core


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during work made of several runs; the message says which finished and how to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
