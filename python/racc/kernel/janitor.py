"""Cleans up after a kernel run whatever way it ends, SIGKILL included.

``racc kernel run`` starts this in a session of its own (Ctrl-C on the terminal does not reach
it) with a pipe on its stdin and nothing else: when the pipe closes (the run's process exited,
normally or killed) it removes the run's namespaces, cgroup folder and pinned BPF objects, then
exits. The run's other children die with it (PR_SET_PDEATHSIG); this one outlives it only for
the teardown, so that a SIGKILL leaves nothing for long even if no run follows to sweep.

``python -m racc.kernel.janitor TAG``
"""

from __future__ import annotations

import os
import signal
import sys

from racc.kernel.machine import PREFIX, teardown


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].startswith(PREFIX):
        print("usage: python -m racc.kernel.janitor racck-<pid>-<label>", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("ready", flush=True)
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    teardown(args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
