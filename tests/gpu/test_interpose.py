"""Issue 2 on the GPU: every Triton launch counted and named, output unchanged,
and the interposer's cost on the raw driver loop (interleaved, one run)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BENCH, check, kernel, median, run, summary  # noqa: E402

W = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads.py")
NOCUPTI = {"TRLAT_CUPTI": "0"}

# 1. tritonbench's nop loop: 100 warm-up + N timed launches, all counted and named.
N = 20000
out, err, rc, rep = run([sys.executable, W, "nop", str(N)], env=NOCUPTI)
k = kernel(rep, "nop_with_args_kernel")
check("nop_with_args loop runs under trlat", rc == 0, err[-300:] if rc else "")
check("every nop_with_args launch counted", k and k["launches"] == N + 100,
      f"report {k and k['launches']}, expected {N + 100}")
check("launches came through dlsym'd cuLaunchKernelEx (sources.driver)", k and k["sources"]["driver"] == N + 100)

# 2. A torch script with a few Triton kernels: same output, every launch named.
plain, _, rc0, _ = run([sys.executable, W, "mix"], preload=False)
pre, err, rc1, rep = run([sys.executable, W, "mix"], env=NOCUPTI)
check("mix: output unchanged under trlat", rc0 == rc1 == 0 and plain == pre, f"{plain.strip()} | {pre.strip()}")
add, sm = kernel(rep, "add_kernel"), kernel(rep, "softmax_kernel")
check("mix: add_kernel x3 and softmax_kernel x1 named and counted",
      add and add["launches"] == 3 and sm and sm["launches"] == 1,
      f"{[(x['name'], x['launches']) for x in (rep or {}).get('kernels', [])]}")
check("mix: no unnamed launches", rep and rep["totals"]["unnamed_launches"] == 0)

# 3. Cost on the raw C loop. Two measurements, both interleaved in this run:
#  (a) in one process, alternating 5000-launch blocks of the direct driver call
#      and the call through trlat's wrapper (bench_launch ab): the wrapper's
#      own cost, free of between-process drift;
#  (b) whole processes with and without LD_PRELOAD, alternating order.
deltas = []
for i in range(5):
    o, e, rc, _ = run([BENCH, "0", "ab"], env=NOCUPTI, report=False)
    m = re.search(r"direct_ns=([0-9.]+) wrapped_ns=([0-9.]+) delta_ns=(-?[0-9.]+) trlat=1", o)
    if not m:
        check("bench_launch ab runs under trlat", False, (o + e)[-300:])
        sys.exit(summary())
    deltas.append((float(m.group(1)), float(m.group(2)), float(m.group(3))))
    print(f"ab run {i}: direct {m.group(1)} ns, through trlat {m.group(2)} ns, delta {m.group(3)} ns")
d_direct, d_wrapped = median([d[0] for d in deltas]), median([d[1] for d in deltas])
d = median([d[2] for d in deltas])
print(f"TABLE interpose_inprocess direct_ns {d_direct:.0f} trlat_ns {d_wrapped:.0f} delta_ns {d:.0f}")
check("trlat adds <= 100 ns per launch to the raw loop (CUPTI off, in-process A/B)", d <= 100, f"+{d:.0f} ns")

ROUNDS, L = 12, 100000
raw, pre = [], []
for i in range(ROUNDS):
    for preload, acc in ((False, raw), (True, pre)) if i % 2 == 0 else ((True, pre), (False, raw)):
        o, e, rc, _ = run([BENCH, str(L), "args16"], preload=preload, env=NOCUPTI, report=False)
        m = re.search(r"ns_per_launch=([0-9.]+)", o)
        if not m:
            check("bench_launch runs", False, e[-300:])
            sys.exit(summary())
        acc.append(float(m.group(1)))
r, p = median(raw), median(pre)
print(f"raw cuLaunchKernelEx loop: median {r:.0f} ns/launch ({', '.join(f'{x:.0f}' for x in raw)})")
print(f"under trlat (CUPTI off):   median {p:.0f} ns/launch ({', '.join(f'{x:.0f}' for x in pre)})")
print(f"TABLE interpose_processes raw_ns {r:.0f} trlat_ns {p:.0f} delta_ns {p - r:.0f} ratio {p / r:.3f}")
sys.exit(summary())
