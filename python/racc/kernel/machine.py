"""The kernel runtime's contact with the machine: names, ``ip``/``tc`` calls, ``setns``, the
cgroup2 mount, the death signal, and the sweep of what a killed run left behind.

Every object a run creates is named ``racck-<pid>-<label>-...`` (namespaces, the cgroup folder,
pinned BPF objects), ``<pid>`` the ``racc kernel run`` process that owns it and ``<label>``
``$RACC_KERNEL_TAG`` or ``run``: the next run removes what belongs to a pid that is gone.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from racc.processes import pid_alive

PREFIX = "racck-"
NETNS_DIR = Path("/run/netns")
BPFFS = Path("/sys/fs/bpf")
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


class KernelUnavailable(RuntimeError):
    """A kernel run cannot start here (the message is the one line that says why)."""


def run_tag(pid: int | None = None) -> str:
    """``racck-<pid>-<label>``: the prefix of every name this run creates."""
    label = re.sub(r"[^A-Za-z0-9]", "", os.environ.get("RACC_KERNEL_TAG", "")) or "run"
    return f"{PREFIX}{os.getpid() if pid is None else pid}-{label[:16]}"


def owner_pid(name: str) -> int | None:
    """The pid in a ``racck-<pid>-...`` name, or None for any other name."""
    m = re.match(rf"{PREFIX}(\d+)-", name)
    return int(m.group(1)) if m else None


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run one ``ip``/``tc`` command; a failure raises with the command and its error line."""
    p = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if check and p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        raise KernelUnavailable(f"`{' '.join(args)}` failed: {err[-1] if err else p.returncode}")
    return p


def setns(name: str) -> None:
    """Move the calling thread into network namespace ``name`` (sockets made afterwards live there)."""
    fd = os.open(NETNS_DIR / name, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns {name}: {os.strerror(e)}")
    finally:
        os.close(fd)


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent dies (PR_SET_PDEATHSIG), then exit at once if it already has: what
    ``racc-live --parent`` does, so that nothing of a run outlives ``racc kernel run``."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def cgroup2_mount() -> Path | None:
    """Where cgroup v2 is mounted (``/proc/mounts``), or None."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "cgroup2":
            return Path(parts[1].replace("\\040", " "))
    return None


def missing_tools() -> list[str]:
    return [t for t in ("ip", "tc") if shutil.which(t) is None]


def qdisc_kinds_available(kinds: set[str]) -> dict[str, bool]:
    """Which of these qdisc kinds the kernel has, probed on a throwaway namespace's loopback
    (a kernel without the module says ``unknown``)."""
    ns = f"{run_tag()}-probe"
    sh("ip", "netns", "add", ns)
    out = {}
    try:
        for k in sorted(kinds):
            args = {"netem": ["delay", "1ms"], "red": _RED_PROBE}.get(k, [])
            p = sh("tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", k, *args, check=False)
            out[k] = p.returncode == 0
            sh("tc", "-n", ns, "qdisc", "del", "dev", "lo", "root", check=False)
    finally:
        sh("ip", "netns", "del", ns, check=False)
    return out


_RED_PROBE = [
    "limit",
    "100000",
    "min",
    "10000",
    "max",
    "30000",
    "avpkt",
    "1000",
    "burst",
    "20",
    "probability",
    "0.1",
    "bandwidth",
    "10mbit",
]


def kill_netns_procs(ns: str) -> None:
    p = sh("ip", "netns", "pids", ns, check=False)
    for pid in p.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ValueError, ProcessLookupError, PermissionError):
            pass


def remove_cgroup_tree(root: Path) -> None:
    """Kill what is left in the per-run cgroup folder ``root`` and remove it, leaves first."""
    if not root.is_dir():
        return
    # os.walk, not Path.rglob: another teardown (the janitor's, the next run's sweep) may be
    # removing the same folders, and walk passes over what vanishes.
    dirs = [Path(d) for d, _, _ in os.walk(root, topdown=False)]
    for d in dirs:
        try:
            for pid in (d / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ValueError, ProcessLookupError):
                    pass
        except OSError:
            pass
    for d in dirs:
        for _ in range(50):  # a killed process leaves its cgroup a moment later
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                import time

                time.sleep(0.02)


def teardown(tag: str) -> None:
    """Remove every namespace, cgroup and pinned object named ``tag-*`` (this run's, or a dead one's)."""
    names = sorted(p.name for p in NETNS_DIR.glob(f"{tag}-*")) if NETNS_DIR.is_dir() else []
    for ns in names:
        kill_netns_procs(ns)
    for ns in names:
        sh("ip", "netns", "del", ns, check=False)
    mount = cgroup2_mount()
    if mount is not None:
        for d in mount.glob(f"{tag}*"):
            remove_cgroup_tree(d)
    if BPFFS.is_dir():
        for p in BPFFS.glob(f"{tag}*"):
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def sweep_stale() -> list[str]:
    """Remove what runs whose ``racc kernel run`` process is gone left behind (a SIGKILL gives
    no chance to clean up); returns the run tags swept."""
    tags = set()
    places = [NETNS_DIR, cgroup2_mount(), BPFFS]
    for place in places:
        if place is None or not place.is_dir():
            continue
        for p in place.glob(f"{PREFIX}*"):
            pid = owner_pid(p.name)
            if pid is None or pid == os.getpid() or pid_alive(pid):
                continue
            m = re.match(rf"({PREFIX}\d+-[A-Za-z0-9]+)", p.name)
            if m:
                tags.add(m.group(1))
    for t in sorted(tags):
        teardown(t)
    return sorted(tags)


SIOCETHTOOL = 0x8946
ETHTOOL_STXCSUM = 0x17
ETHTOOL_STSO = 0x1F
ETHTOOL_SGSO = 0x24


def offloads_off(ifname: str) -> None:
    """Transmit checksum, TSO and GSO off on ``ifname`` in the calling thread's namespace (what
    ``ethtool -K IF tx off tso off gso off`` does, by its ioctl: ethtool need not be installed).
    A frame that leaves by a veth with the checksum left to 'hardware' carries a wrong one once
    the delay line has copied it through user space, and the next node drops it."""
    import fcntl
    import socket

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for cmd in (ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_STXCSUM):
            val = ctypes.create_string_buffer(struct_pack_ethtool(cmd, 0))
            ifr = ifname.encode()[:15].ljust(16, b"\0") + ctypes.addressof(val).to_bytes(8, "little") + bytes(16)
            fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)
    finally:
        s.close()


def struct_pack_ethtool(cmd: int, data: int) -> bytes:
    import struct

    return struct.pack("II", cmd, data)
