"""racc on the Linux kernel's own TCP and queues (``racc kernel run``; docs/KERNEL.md).

``plan`` (scenario → namespaces, ports, routes, flows; refusals), ``network`` (namespaces, veth,
qdiscs, routes), ``delayline`` (a link's delay where the kernel has no netem), ``traffic`` (the
per-host traffic program), ``qdisc_stats`` (the ports' counters over rtnetlink), ``machine``
(names, ``setns``, cgroup2, teardown and the sweep of dead runs), ``janitor``, ``run``. The BPF
programs' loader is ``bpf`` (issue 36's other half), used only through its small interface.
"""
