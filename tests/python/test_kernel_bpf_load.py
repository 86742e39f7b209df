"""The kernel programs build, pass the verifier, attach and leave nothing behind (docs/KERNEL-BPF.md).
Root only, skipped with `bpf.available()`'s reason elsewhere; the parameter checks run anywhere."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from racc.kernel import bpf

REASON = bpf.available()
needs_kernel = pytest.mark.skipif(REASON is not None, reason=f"kernel BPF unavailable: {REASON}")
CC_LIST = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


@pytest.fixture
def exclusive():
    import kernel_path

    with kernel_path.exclusive():
        yield


@needs_kernel
@pytest.mark.usefixtures("exclusive")
def test_controller_registers_and_unregisters_with_its_loader():
    import kernel_path

    cg = kernel_path.new_cgroup("load")
    try:
        with bpf.attach_hosts(str(cg), "vcp", {}) as h:
            assert h.cc_name == "racc_vcp"
            assert "racc_vcp" in CC_LIST.read_text().split()
            assert set(h.counters()) >= {"md_events", "echo_malformed", "echo_absent", "echo_written", "sent_ect1"}
            assert not any(h.counters().values())
        assert "racc_vcp" not in CC_LIST.read_text().split(), "closing the handle unregisters the controller"
        # A SIGKILLed loader leaves nothing either: every attachment is a link it holds.
        h = bpf.attach_hosts(str(cg), "vcp", {})
        h._loader._proc.kill()
        h._loader._proc.wait()
        assert "racc_vcp" not in CC_LIST.read_text().split()
        h.close()
    finally:
        kernel_path.sweep()


@needs_kernel
@pytest.mark.usefixtures("exclusive")
def test_hosts_share_one_controller():
    """A run attaches each host's cgroup: one controller for all of them (one socket storage),
    the same parameters required, gone with the last handle."""
    import kernel_path

    a, b = kernel_path.new_cgroup("host-a"), kernel_path.new_cgroup("host-b")
    handles = []
    try:
        ha = bpf.attach_hosts(str(a), "vcp", {"iw": 4})
        handles.append(ha)
        hb = bpf.attach_hosts(str(b), "vcp", {"iw": 4})
        handles.append(hb)
        assert ha.cc_name == hb.cc_name == "racc_vcp" and ha._loader is hb._loader
        with pytest.raises(ValueError, match="one vcp parameter table at a time"):
            bpf.attach_hosts(str(b), "vcp", {"iw": 5})
        with pytest.raises(RuntimeError, match="cgroup /nonexistent"):
            bpf.attach_hosts("/nonexistent", "vcp", {"iw": 4})
        with pytest.raises(RuntimeError, match="netns nosuch-ns"):
            ha.attach_iface("nosuch-ns", "nosuch")
        ha.close()
        assert "racc_vcp" in CC_LIST.read_text().split(), "b still uses it"
        hb.close()
        hb.close()  # twice is harmless
        assert "racc_vcp" not in CC_LIST.read_text().split()
    finally:
        for h in handles:
            h.close()
        kernel_path.sweep()


@needs_kernel
@pytest.mark.usefixtures("exclusive")
def test_nothing_outlives_a_killed_parent():
    """The loader dies with the process that started it (PR_SET_PDEATHSIG), and its links with it."""
    import signal
    import sys
    import time

    import kernel_path

    cg = kernel_path.new_cgroup("orphan")
    child = (
        "import sys\nfrom racc.kernel import bpf\n"
        f"h = bpf.attach_hosts({str(cg)!r}, 'vcp', {{}})\nprint('attached', flush=True)\nsys.stdin.read()\n"
    )
    try:
        p = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert p.stdout and p.stdout.readline().strip() == "attached"
        assert "racc_vcp" in CC_LIST.read_text().split()
        p.send_signal(signal.SIGKILL)
        p.wait()
        for _ in range(100):  # the loader's death and the links' release are asynchronous
            if "racc_vcp" not in CC_LIST.read_text().split():
                break
            time.sleep(0.05)
        assert "racc_vcp" not in CC_LIST.read_text().split(), "the controller outlived its parent"
    finally:
        kernel_path.sweep()


@needs_kernel
@pytest.mark.usefixtures("exclusive")
def test_router_attaches_to_an_interface_in_a_namespace():
    import kernel_path

    kernel_path.sweep()
    ns = f"{kernel_path.TAG}-r"
    try:
        kernel_path.sh("ip", "netns", "add", ns)
        kernel_path.sh("ip", "link", "add", "r1", "type", "veth", "peer", "name", "r2", ns=ns)
        with bpf.attach_router(ns, "r1", "vcp", {"gamma": 0.95}, 10e6) as h:
            progs = json.loads(
                subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, check=True).stdout
            )
            ids = {p["id"] for p in progs if p.get("name") == "vcp_router_egress"}
            links = json.loads(
                subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, check=True).stdout
            )
            assert any(link.get("prog_id") in ids for link in links), "the router program is attached by a link"
            assert h.counters()["packets"] == 0
        with pytest.raises(RuntimeError, match="interface nosuch"):
            bpf.attach_router(ns, "nosuch", "vcp", {}, 10e6)
    finally:
        kernel_path.sweep()


def test_parameters_are_checked_with_one_line_errors():
    with pytest.raises(ValueError, match=r"params\.pacing_gain: not supported"):
        bpf.law_config({"pacing_gain": 1.2})
    with pytest.raises(ValueError, match=r"params\.initial_slow_start: not supported"):
        bpf.law_config({"initial_slow_start": True})
    with pytest.raises(ValueError, match="beta"):
        bpf.law_config({"beta": 2.0})  # racc-proto's range check
    with pytest.raises(ValueError, match="gamma"):
        bpf.router_config({"gamma": 1.5}, 10e6)
    # A shipped scenario's VCP tables are accepted as they are.
    bpf.law_config({"t_p": 0.2, "mu": 0.0625, "alpha": 1.0, "beta": 0.875, "sigma_mi": 2.5, "sigma_ai": 10.0,
                    "md_hold": "t_p", "iw": 2, "initial_slow_start": False})  # fmt: skip
    bpf.router_config({"t_p": 0.2, "t_q": 0.01, "k_q": 0.5, "a": 0.875, "gamma": 0.98}, 10e6)
    with pytest.raises(ValueError, match=r"params\.ai_law"):
        bpf.law_config({"ai_law": "ns3"})
    with pytest.raises(ValueError, match=r"params\.ai_ns2\.td"):
        bpf.law_config({"ai_ns2": {"td": 0.1}})
    with pytest.raises(ValueError, match=r"params\.md_hold"):
        bpf.law_config({"md_hold": "forever"})
    with pytest.raises(ValueError, match=r"router_params\.mu"):
        bpf.router_config({"mu": 0.1}, 10e6)
    with pytest.raises(ValueError, match="rate"):
        bpf.router_config({}, 0)
    with pytest.raises(ValueError, match="'newreno': not available"):
        bpf.attach_hosts("/nonexistent", "newreno", {})  # Linux's own (plan.LINUX_CC), no BPF
    assert bpf.supported("vcp") and not bpf.supported("newreno")
    # The defaults are racc-proto's: t_p 200 ms, β 0.875, γ·C·t_p/8 at 10 Mb/s = 245 000 B.
    cfg = bpf.law_config({})
    assert cfg[0] == 200_000 and cfg[4] == round(0.875 * 2**24) and cfg[-1] == 2
    assert bpf.router_config({}, 10e6)[4] == 245_000 * 256
