# A probe for the GPU machine: is the spread of a hit's ratio between
# processes (docs/BENCHMARKS.md: ±0.05-0.1x, the raw loop itself up to 30%
# apart) the address layout each process draws? Runs the benchmark's
# in-process A/B child (scripts/bench_fastpath.py --child KERNEL ab) N times
# with address-space randomization off (`setarch -R`: every process the
# same layout) and N times with it on, alternating, and prints each
# process's hit/raw and Python-floor/raw ratios and each group's spread.
#   python3 scripts/probes/aslr_spread.py [KERNEL] [N] [BLOCK] [PAIRS]
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
from common import LIB, pin  # noqa: E402

kernel = sys.argv[1] if len(sys.argv) > 1 else "nop_with_args"
n, block, pairs = (int(x) for x in (sys.argv[2:5] + ["4", "2000", "8"][len(sys.argv[2:5]):]))
if not shutil.which("setarch"):
    raise SystemExit("no setarch here")
env = dict(os.environ, LD_PRELOAD=LIB, TRLAT_FASTPATH="1", TRLAT_CUPTI="0", TRLAT_SUMMARY="0",
           TRLAT_OUTPUT="/dev/null")
child = [sys.executable, os.path.join(ROOT, "scripts", "bench_fastpath.py"), "--child", kernel, "ab", str(block),
         str(pairs)]
got = {"fixed": [], "random": []}
for i in range(2 * n):
    group = ("fixed", "random")[i % 2]
    cmd = (["setarch", os.uname().machine, "-R"] if group == "fixed" else []) + child
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, preexec_fn=pin)
    d = next((json.loads(t[3:]) for t in p.stdout.split() if t.startswith("ab=")), None)
    if not d:
        sys.stderr.write("failed: %s\n" % (p.stdout + p.stderr)[-1500:])
        continue

    def r(a, b):
        return statistics.median(x / y for x, y in zip(d[a], d[b]))
    row = (statistics.median(d["raw"]), r("on", "raw"), r("pyc_device", "raw"), r("on", "pyc_device"))
    got[group].append(row)
    print("%-6s raw %5.0f ns  hit/raw %.3f  floor/raw %.3f  hit/floor %.3f" % ((group,) + row), flush=True)
for group, rows in got.items():
    if len(rows) > 1:
        cols = list(zip(*rows))
        print("%-6s %d processes: raw ns %s; hit/raw median %.3f stdev %.3f range %.3f-%.3f; floor/raw stdev %.3f; "
              "hit/floor stdev %.3f" % (group, len(rows), " ".join("%.0f" % x for x in cols[0]),
                                        statistics.median(cols[1]), statistics.stdev(cols[1]), min(cols[1]),
                                        max(cols[1]), statistics.stdev(cols[2]), statistics.stdev(cols[3])))
