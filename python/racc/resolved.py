"""The resolved scenario as the engine returns it (JSON text), parsed only when read.

A run keeps it for ``scenario.resolved.json`` and for the experiments that look up flows and
routes in it. Parsed, a listed flow costs about 1 KB of Python objects (60 MB for qfcp-fct's
60,000 flows), more than the run's own per-flow state, so a run that never reads it never
parses it and writes the engine's text as it is (issue 21: memory that grows with the flows
alive, not with every flow's description).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any


class Resolved(Mapping):
    """A read-only mapping over the engine's resolved-scenario JSON text."""

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self._data: dict[str, Any] | None = None

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            self._data = json.loads(self._text or "{}")
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
        return self._text if self._data is None else None

    def __reduce__(self):  # pickled (Dask) as its text or its data, not as a parsed copy of both
        return (Resolved, (self._text if self._data is None else json.dumps(self._data),))
