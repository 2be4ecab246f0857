# D1 misses (reads and writes; with "code", I1 misses) per call from a
# callgrind --cache-sim=yes profile, by module and by function:
# scripts/probes/coldlines.sh.
#   python3 scripts/probes/coldlines_report.py CALLGRIND_OUT CALLS [TOP [code]]
import collections
import re
import subprocess
import sys

code = len(sys.argv) > 4 and sys.argv[4] == "code"
show = "Ir,I1mr,ILmr" if code else "Ir,D1mr,D1mw"
out = subprocess.run(["callgrind_annotate", "--show=" + show, "--sort=" + show.split(",")[1], "--threshold=100", "--auto=no",
                      sys.argv[1]], capture_output=True, text=True).stdout
calls = float(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
ROW = re.compile(r"\s*([\d,]+) \([^)]*\)\s+([\d,.]+)(?: \([^)]*\))?\s+([\d,.]+)(?: \([^)]*\))?\s+(\S.*)$")


def count(x):
    return float(x.replace(",", "")) if x.strip(".") else 0.0


mods, fns = collections.Counter(), []
for line in out.splitlines():
    m = ROW.match(line)
    if not m or "PROGRAM TOTALS" in line:
        continue
    _, r, w, name = m.groups()
    if code:
        w = "0"  # ILmr: misses in the last level too, already among I1mr
    if "fake_cuda.c" in name or "getenv" in name or name.startswith("???:0x"):  # the fake driver's sweeps (its code: no symbol) and its per-launch getenv
        continue
    obj = name.rsplit("[", 1)[1] if name.endswith("]") else name  # inlined code: its source file only
    mod = ("trlat" if "libtrlat" in obj or re.match(r"(\./)?(fastpath|interpose)/", obj) else
           "torch" if "/torch/" in obj else "python" if "python" in obj else "libc/ld")
    v = (count(r) + count(w)) / calls
    mods[mod] += v
    fns.append((v, mod, name[:110]))
print("cold %s lines per call: %s, total %.1f" % ("code" if code else "data",
                                                ", ".join("%s %.1f" % kv for kv in mods.most_common()),
                                                sum(mods.values())))
for v, mod, name in sorted(fns, reverse=True)[:top]:
    print("%6.2f  %-7s %s" % (v, mod, name))
