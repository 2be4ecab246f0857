# Symbolizes scripts/probes/sample_hits.py's samples (on the machine that took
# them: its libraries' addresses) and prints, per arm, ns per launch by module
# and by function, then the hit's excess over the floor by function.
#   python3 scripts/probes/sample_report.py OUT [TOP]
import bisect
import collections
import json
import subprocess
import sys

out = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
meta = json.load(open(out + ".json"))
samples, maps, base = [], [], {}
with open(out) as f:
    in_maps = False
    for line in f:
        if line.startswith("MAPS"):
            in_maps = True
            continue
        if in_maps:
            p = line.split()
            if len(p) >= 6:
                a, b = (int(x, 16) for x in p[0].split("-"))
                if int(p[2], 16) == 0:
                    base.setdefault(p[5], a)  # where the file's first segment (address 0) is
                if "x" in p[1]:
                    maps.append((a, b, int(p[2], 16), p[5]))
        else:
            t, ip = line.split()
            samples.append((int(t), int(ip, 16)))
maps.sort()
starts = [m[0] for m in maps]
syms = {}


def symbols(path):
    if path not in syms:
        tab = {}
        for opt in ([], ["-D"]):
            try:
                r = subprocess.run(["nm", "--defined-only", "-C"] + opt + [path], capture_output=True, text=True)
            except OSError:
                break
            for line in r.stdout.splitlines():
                p = line.split(None, 2)
                if len(p) == 3 and p[1] in "tTwWiI":
                    tab.setdefault(int(p[0], 16), p[2])
        keys = sorted(tab)
        syms[path] = (keys, [tab[k] for k in keys])
    return syms[path]


def where(ip):
    i = bisect.bisect_right(starts, ip) - 1
    if i < 0 or ip >= maps[i][1]:
        return "?", "?"
    path = maps[i][3]
    rel = ip - base.get(path, 0)  # the address in the file (a shared object's first segment is at 0)
    keys, names = symbols(path)
    for addr in (rel, ip):
        j = bisect.bisect_right(keys, addr) - 1
        if j >= 0 and addr - keys[j] < 1 << 20:
            return path.rsplit("/", 1)[-1], names[j][:90]
    return path.rsplit("/", 1)[-1], "?"


per = meta["ns_per_launch"]
by_mod, by_fn, total = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter), collections.Counter()
for t, ip in samples:
    name = meta["tags"][str(t)]
    m, fn = where(ip)
    by_mod[name][m] += 1
    by_fn[name][(m, fn)] += 1
    total[name] += 1
print("%s: ns per launch %s; samples %s" % (meta["kernel"], {k: round(v) for k, v in per.items()}, dict(total)))
for name in per:
    scale = per[name] / max(total[name], 1)
    print("\n== %s: %.0f ns per launch, by module" % (name, per[name]))
    for m, c in by_mod[name].most_common(12):
        print("  %7.0f ns  %s" % (c * scale, m))
    print("   by function")
    for (m, fn), c in by_fn[name].most_common(top):
        print("  %7.0f ns  %-28s %s" % (c * scale, m, fn))
fs, hs = per["floor"] / max(total["floor"], 1), per["hit"] / max(total["hit"], 1)
diff = {k: by_fn["hit"][k] * hs - by_fn["floor"][k] * fs for k in set(by_fn["hit"]) | set(by_fn["floor"])}
print("\n== hit minus floor: %.0f ns per launch, by function" % (per["hit"] - per["floor"]))
for k in sorted(diff, key=lambda k: -abs(diff[k]))[:top]:
    print("  %+7.0f ns  %-28s %s" % (diff[k], k[0], k[1]))
md = collections.Counter()
for (m, _), v in diff.items():
    md[m] += v
print("   by module")
for m, v in sorted(md.items(), key=lambda kv: -abs(kv[1])):
    print("  %+7.0f ns  %s" % (v, m))
