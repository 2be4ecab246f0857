"""Two builds of trlat in one run, alternated process by process: the
interposer's in-process overhead (bench_launch ab) and the fast path's
in-process hit and miss ratios (scripts/bench_fastpath.py, one A/B
process per kernel a round), so that a change that should cost nothing (a
move of files, a refactor) is measured against the library before it.

  TRLAT_LIB_A=<before/libtrlat.so> TRLAT_LIB_B=<after/libtrlat.so> \
      scripts/gpu-test.sh bench_ab_libs.py          [AB_ROUNDS=3] [AB_BENCH_ARGS=...]

Each figure is a ratio measured inside one process (to the raw loop of the
same process), so the machine's drift between processes cancels; the
TABLE lines give each library's median over the rounds and B / A."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BENCH, ROOT, check, median, run, summary  # noqa: E402

LIBS = {"A": os.environ.get("TRLAT_LIB_A"), "B": os.environ.get("TRLAT_LIB_B")}
ROUNDS = int(os.environ.get("AB_ROUNDS", "3"))
BENCH_ARGS = (os.environ.get("AB_BENCH_ARGS") or "--rounds 0 --n 8000 --skip-decode --ab-rounds 1 --ab-pairs 8 "
              "--ab-block 2000").split()
HIT = re.compile(r"^TABLE fastpath (\S+)\s+hit ([0-9.]+)x raw .*miss ([0-9.]+)x triton")

if not any(LIBS.values()):  # a run of every suite: nothing to compare
    print("bench_ab_libs: TRLAT_LIB_A and TRLAT_LIB_B unset; nothing compared")
    sys.exit(0)
if not all(LIBS.values()) or not all(os.path.exists(p) for p in LIBS.values()):
    check("TRLAT_LIB_A and TRLAT_LIB_B name two libraries", False, str(LIBS))
    sys.exit(summary())

interpose = {k: [] for k in LIBS}
hits = {k: {} for k in LIBS}
for r in range(ROUNDS):
    for name in (("A", "B") if r % 2 == 0 else ("B", "A")):
        lib = LIBS[name]
        o, e, rc, _ = run([BENCH, "0", "ab"], preload=False, env={"TRLAT_CUPTI": "0", "LD_PRELOAD": lib}, report=False)
        m = re.search(r"delta_ns=(-?[0-9.]+)", o)
        if check(f"round {r} {name}: bench_launch ab", m, (o + e)[-300:]):
            interpose[name].append(float(m.group(1)))
        env = dict(os.environ, TRLAT_LIB=lib)
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_fastpath.py")] + BENCH_ARGS,
                           env=env, capture_output=True, text=True, timeout=600)
        found = 0
        for line in p.stdout.splitlines():
            m = HIT.match(line)
            if m:
                found += 1
                hits[name].setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
        check(f"round {r} {name}: bench_fastpath", p.returncode == 0 and found, p.stderr[-300:])
        print(f"round {r} {name}: interposer {interpose[name][-1:]} ns; "
              f"{ {k: v[-1] for k, v in hits[name].items()} }", flush=True)

a, b = median(interpose["A"] or [0]), median(interpose["B"] or [0])
print(f"TABLE ab_libs interposer_ns A {a:.0f} B {b:.0f} B-A {b - a:+.0f}")
for kernel in sorted(set(hits["A"]) & set(hits["B"])):
    ha, hb = median([x[0] for x in hits["A"][kernel]]), median([x[0] for x in hits["B"][kernel]])
    ma, mb = median([x[1] for x in hits["A"][kernel]]), median([x[1] for x in hits["B"][kernel]])
    print(f"TABLE ab_libs {kernel:<14} hit A {ha:.3f}x B {hb:.3f}x B/A {hb / ha:.3f}  "
          f"miss A {ma:.3f}x B {mb:.3f}x B/A {mb / ma:.3f}")
sys.exit(summary())
