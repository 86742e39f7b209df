"""Whether a process still runs: how the live and kernel runtimes tell their own leftovers (a
temporary folder, namespaces) from those of a run that was killed and cannot clean up."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists (also when it is another user's, which ``kill`` refuses)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
