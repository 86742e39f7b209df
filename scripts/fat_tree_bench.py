"""Speed and memory of the fat-tree runs (issue 40): packet-hops per CPU-second and peak memory.

    .venv/bin/python scripts/fat_tree_bench.py scenarios/fat-tree-permutation.toml scenarios/fat-tree-incast.toml

One `key=value` line per scenario. CPU time is the whole `racc.run` in this process (check, build,
run and result tables; the first case also pays polars' first use); peak memory is the run's own
figure (`run.peak_memory_bytes`, the process's peak resident size, reset at the run's start).
"""

import sys
import time

import racc

for name in sys.argv[1:]:
    c0 = time.process_time()
    r = racc.run(name)
    cpu = time.process_time() - c0
    s = r.summary
    hops = s["packet_hops"]
    print(
        f"case={name} packet_hops={hops} cpu_s={cpu:.3f} hops_per_cpu_s={hops / cpu:.3e} "
        f"setup_s={s['run']['setup_s']:.3f} peak_rss_mb={s['run']['peak_memory_bytes'] / 2**20:.1f} "
        f"flows={s['flows']['count'] if isinstance(s.get('flows'), dict) and 'count' in s['flows'] else ''} "
        f"completed={r.completions.height}"
    )
