"""racc — router-assisted congestion control: simulator front end.

    >>> import racc
    >>> res = racc.run("scenarios/dumbbell.toml", overrides=["flows[0].protocol=reno"], out="results/x")
    >>> res.summary["flows"]["jain"], res.links.head()

Heavy modules (polars, matplotlib) load on first use, so ``import racc._core`` stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Results", "ResultsError", "ScenarioError", "__version__", "load", "run"]

_LAZY = {
    "run": ("racc.runner", "run"),
    "load": ("racc.results", "load"),
    "Results": ("racc.results", "Results"),
    "ScenarioError": ("racc.errors", "ScenarioError"),
    "ResultsError": ("racc.errors", "ResultsError"),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("racc")
    except PackageNotFoundError:
        try:
            from racc._core import __version__ as v

            return v
        except ImportError:
            return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        v = _version()
        globals()["__version__"] = v
        return v
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'racc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
