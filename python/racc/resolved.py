"""The resolved scenario as the engine gives it, made into JSON text and parsed only when read.

A run keeps it for ``scenario.resolved.json`` and for the experiments that look up flows and
routes in it. Parsed, a listed flow costs about 1 KB of Python objects (60 MB for qfcp-fct's
60,000 flows), more than the run's own per-flow state, so a run that never reads it never
parses it and writes the engine's text as it is. For a run, the engine hands over the checked
scenario itself (``Simulation.resolved()``), whose text is made only when something asks for it:
a million listed flows are about 300 MB of text, which a run that writes no results never makes
(issue 21: memory that grows with the flows alive, and a trace that loads in seconds).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol


class _Source(Protocol):
    """The engine's checked scenario (``_core.ResolvedScenario``): its JSON text on demand."""

    def json(self) -> str: ...


class Resolved(Mapping):
    """A read-only mapping over the engine's resolved scenario: its JSON text, or the engine's
    checked scenario whose text is made on first use."""

    def __init__(self, source: str | _Source) -> None:
        self._source: _Source | None = None if isinstance(source, str) else source
        self._text: str | None = source if isinstance(source, str) else None
        self._data: dict[str, Any] | None = None

    def _made(self) -> str:
        if self._text is None:
            self._text = self._source.json() if self._source is not None else "{}"
            self._source = None  # the engine's scenario is no longer held
        return self._text

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            self._data = json.loads(self._made())
            self._text = None  # the parsed copy replaces the text
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def text(self) -> str | None:
        """The engine's text, while nothing has been parsed (None after)."""
        return self._made() if self._data is None else None

    def __reduce__(self):  # pickled (Dask) as its text or its data, not as a parsed copy of both
        return (Resolved, (self.text if self._data is None else json.dumps(self._data),))
