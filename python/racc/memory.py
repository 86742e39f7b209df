"""The run's own peak memory: the process's peak resident set size, reset when a run starts.

On Linux the kernel keeps the peak (``VmHWM`` in ``/proc/self/status``) and resets it to the
current size when ``5`` is written to ``/proc/self/clear_refs``, so a run in a long-lived
process (a notebook, a test session, ``racc reproduce``) reports its own peak: what the process
held when the run started plus the most the run added. Elsewhere the figure is the process's
peak since it started (``getrusage``), and ``peak_reset`` is false.
"""

from __future__ import annotations

import sys


def reset_peak() -> bool:
    """Reset the process's peak resident size to its current size; False where that is impossible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_bytes() -> int | None:
    """Peak resident set size of this process, bytes (since the last :func:`reset_peak`)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss if sys.platform == "darwin" else rss * 1024
    except (ImportError, OSError):
        return None
