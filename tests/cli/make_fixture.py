#!/usr/bin/env python3
"""Writes the fixture reports of the trlat CLI tests (tests/cli/fixtures).

usage: make_fixture.py OUTDIR
       make_fixture.py --check FILE...   (exit 1 with the first inconsistency)

Each fixture is what libtrlat.so would write (docs/REPORT.md) for a
simulated process: launches on host threads, kernels on GPU streams, the
starved intervals between them. Statistics and histograms are computed from
the simulated per-launch values with the log2x8-v1 scheme of
interpose/hist.h, so every hist is consistent with count/sum/min/max and
every percentile is what the library computes. Deterministic: the same
files every run (run.sh checks that the checked-in fixtures are current).

rank0..2.json are three processes of one job and combined.json the single
report of all their launches: `trlat merge rank*.json` must equal it.
"""
import json
import math
import os
import random
import sys

# ---- histogram scheme log2x8-v1 (interpose/hist.h) ----
LINEAR, SUB, MAX_MSB = 16, 8, 39
BUCKETS = LINEAR + (MAX_MSB - 3) * SUB


def hist_index(v):
    if v < LINEAR:
        return v
    msb = v.bit_length() - 1
    if msb > MAX_MSB:
        return BUCKETS - 1
    return LINEAR + (msb - 4) * SUB + ((v >> (msb - 3)) & (SUB - 1))


def hist_lower(i):
    if i < LINEAR:
        return i
    k = i - LINEAR
    msb, sub = 4 + k // SUB, k % SUB
    return (SUB + sub) << (msb - 3)


def hist_mid(i):
    if i < LINEAR:
        return i
    msb = 4 + (i - LINEAR) // SUB
    return hist_lower(i) + (1 << (msb - 3)) // 2


class Stat:
    def __init__(self):
        self.count = self.sum = self.min = self.max = 0
        self.hist = [0] * BUCKETS

    def add(self, v):
        if self.count == 0 or v < self.min:
            self.min = v
        self.max = max(self.max, v)
        self.count += 1
        self.sum += v
        self.hist[hist_index(v)] += 1

    def quantile(self, q):
        """As trlat_stat_quantile: first bucket reaching ceil(q*count)."""
        if self.count == 0:
            return 0
        rank = int(q * self.count)
        if rank < q * self.count:
            rank += 1
        rank = max(rank, 1)
        cum = 0
        for i, n in enumerate(self.hist):
            cum += n
            if cum >= rank:
                return min(max(hist_mid(i), self.min), self.max)
        return self.max

    def to_json(self):
        return {"count": self.count, "sum": self.sum, "min": self.min, "max": self.max,
                "p50": self.quantile(0.5), "p90": self.quantile(0.9), "p99": self.quantile(0.99),
                "hist": [[i, n] for i, n in enumerate(self.hist) if n]}


# ---- simulation ----

class Kernel:
    """How one kernel behaves: mean times in ns (None: not measured)."""

    def __init__(self, name, py=None, driver=5000, gpu=3000, runtime=False, sites=("train.py:42",),
                 site_kind="python", module=None, grid=(4, 1, 1), block=(128, 1, 1)):
        self.name, self.py, self.driver, self.gpu = name, py, driver, gpu
        self.runtime, self.sites, self.site_kind, self.module = runtime, sites, site_kind, module
        self.grid, self.block = grid, block


def jitter(rng, mean, spread=0.2):
    return max(1, int(rng.lognormvariate(math.log(mean), spread)))


class Process:
    def __init__(self, pid, seed, cupti=True, fastpath=False):
        self.pid, self.rng, self.cupti, self.fastpath = pid, random.Random(seed), cupti, fastpath
        self.records = []
        self.threads = {}  # tid -> [host clock, stream, stream free at, launches so far]

    def thread(self, tid, stream, start):
        self.threads[tid] = [start, stream, 0, 0]

    def launch(self, tid, k, gap=20000):
        """One launch of kernel k from thread tid; returns its record."""
        rng, th = self.rng, self.threads[tid]
        r = {"kernel": k.name, "module": k.module, "tid": tid, "stream": th[1], "site": None,
             "kind": k.site_kind, "grid": k.grid, "block": k.block}
        gap_ns = jitter(rng, gap)
        r["gap"] = None if (th[3] == 0 or k.runtime) else gap_ns
        th[0] += gap_ns
        if k.runtime:
            r.update(source="runtime", py=None, driver=None, py_start=None, start=th[0], end=th[0])
            th[0] += 8000
        else:
            r["source"] = "driver"
            r["fastpath"] = None
            if k.py is not None and self.fastpath:
                hit = rng.random() < 0.8
                r["fastpath"] = "hit" if hit else ("miss:" + rng.choice(["new-shape", "new-shape", "kwargs"]))
                py = jitter(rng, k.py * (0.15 if hit else 1.0))
            else:
                py = jitter(rng, k.py) if k.py is not None else None
            r["py"], r["py_start"] = py, th[0] if py is not None else None
            r["start"] = th[0] + (py or 0)
            r["driver"] = jitter(rng, k.driver)
            r["end"] = r["start"] + r["driver"]
            r["site"] = k.sites[rng.randrange(len(k.sites))] if k.sites else None
            th[0] = r["end"]
            th[3] += 1
        if self.cupti:
            gpu_start = max(th[2], r["end"] + 3000)
            r["gpu"] = jitter(rng, k.gpu)
            # Starved: the stream went idle before this launch entered the driver.
            r["starved_iv"] = (th[2], gpu_start) if 0 < th[2] < r["start"] else None
            r["gpu_start"], r["gpu_end"] = gpu_start, gpu_start + r["gpu"]
            th[2] = r["gpu_end"]
        else:
            r["gpu"] = r["starved_iv"] = None
        self.records.append(r)
        return r


def union_length(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


# ---- reports ----

def kernel_entries(records, cupti, fastpath):
    by_name = {}
    for r in records:
        by_name.setdefault(r["kernel"], []).append(r)
    out = []
    for name, rs in by_name.items():
        driver, gap = Stat(), Stat()
        py = Stat() if any(r["py"] is not None for r in rs) else None
        gpu = Stat() if cupti else None
        starved = starved_launches = 0
        fp = {"hits": 0, "misses": 0, "fallbacks": {}} if fastpath and py else None
        sites = {}
        for r in rs:
            if r["driver"] is not None:
                driver.add(r["driver"])
            if r["gap"] is not None:
                gap.add(r["gap"])
            if r["py"] is not None:
                py.add(r["py"])
            if cupti:
                gpu.add(r["gpu"])
                if r["starved_iv"]:
                    starved += r["starved_iv"][1] - r["starved_iv"][0]
                    starved_launches += 1
            if fp is not None and r.get("fastpath"):
                if r["fastpath"] == "hit":
                    fp["hits"] += 1
                else:
                    fp["misses"] += 1
                    reason = r["fastpath"].split(":", 1)[1]
                    fp["fallbacks"][reason] = fp["fallbacks"].get(reason, 0) + 1
            if r["site"]:
                s = sites.setdefault(r["site"], [r["kind"], 0])
                s[1] += 1
        if fp:
            fp["fallbacks"] = dict(sorted(fp["fallbacks"].items(), key=lambda kv: (-kv[1], kv[0])))
        ranked = sorted(sites.items(), key=lambda kv: (-kv[1][1], kv[0]))
        call_sites = [{"site": s, "kind": kind, "launches": n} for s, (kind, n) in ranked[:8]]
        if len(ranked) > 8:
            call_sites.append({"site": "(other)", "kind": "other", "launches": sum(n for _, (_, n) in ranked[8:])})
        out.append({
            "name": name, "module": rs[0]["module"], "launches": len(rs),
            "sources": {"driver": sum(r["source"] == "driver" for r in rs),
                        "runtime": sum(r["source"] == "runtime" for r in rs)},
            "driver_ns": driver.to_json(), "gap_ns": gap.to_json(),
            "py_to_driver_ns": py.to_json() if py else None,
            "gpu_ns": gpu.to_json() if gpu else None,
            "starved_ns": starved if cupti else None,
            "starved_launches": starved_launches if cupti else None,
            "fastpath": fp, "call_sites": call_sites,
            "_host": driver.sum + (py.sum if py else 0),
        })
    out.sort(key=lambda k: (-k["_host"], k["name"]))
    for k in out:
        del k["_host"]
    return out


def events_of(records, n, stream_handles):
    """The last n host launches, their GPU kernels and starved intervals."""
    host = [r for r in records if r["source"] == "driver"]
    host.sort(key=lambda r: r["start"])
    ev = []
    for r in host[len(host) - n:] if n else []:
        ev.append({"kind": "launch", "tid": r["tid"], "kernel": r["kernel"], "start_ns": r["start"],
                   "end_ns": r["end"], "py_ns": r["py_start"], "stream": stream_handles[r["stream"]],
                   "corr": r["corr"], "grid": list(r["grid"]), "block": list(r["block"])})
        if r["gpu"] is not None:
            ev.append({"kind": "gpu", "kernel": r["kernel"], "device": 0, "stream": r["stream"],
                       "start_ns": r["gpu_start"], "end_ns": r["gpu_end"], "corr": r["corr"],
                       "source": "driver"})
        if r["starved_iv"]:
            ev.append({"kind": "starved", "kernel": r["kernel"], "device": 0, "stream": r["stream"],
                       "start_ns": r["starved_iv"][0], "end_ns": r["starved_iv"][1]})
    ev.sort(key=lambda e: e["start_ns"])
    return ev


def number_launches(records):
    for i, r in enumerate(sorted(records, key=lambda r: (r["start"], r["tid"]))):
        r["corr"] = i + 1


def report(meta, records, cupti="on", fastpath="off", stacks=False, trace=0, gpu_busy=None,
           threads=None, epoch=0):
    on = cupti == "on"
    kernels = kernel_entries(records, on, fastpath != "off")
    handles = {7: "0x55d0c0a3e000", 13: "0x55d0c0b41200"}
    end = max((r.get("gpu_end") or r["end"]) for r in records)
    if gpu_busy is None and on:
        gpu_busy = union_length([(r["gpu_start"], r["gpu_end"]) for r in records])
    py_total = [k["py_to_driver_ns"]["sum"] for k in kernels if k["py_to_driver_ns"]]
    doc = {
        "schema": "trlat-report/1", "trlat_version": "0.1.0", "hist_scheme": "log2x8-v1",
        "pid": meta["pid"], "rank": meta.get("rank"), "local_rank": meta.get("rank"),
        "world_size": meta.get("world_size"), "host": meta.get("host", "gpu-node-1"),
        "argv0": meta.get("argv0", "python3"), "wall_ns": end + 1_000_000,
        "clock": {"source": "tsc", "epoch_monotonic_ns": 5_000_000_000_000 + epoch,
                  "epoch_realtime_ns": 1_732_890_000_000_000_000 + epoch},
        "config": {"cupti": cupti, "cupti_reason": None, "fastpath": fastpath, "stacks": stacks,
                   "trace": trace},
        "totals": {
            "launches": len(records), "kernels": len(kernels),
            "threads": threads if threads is not None else len({r["tid"] for r in records}),
            "driver_ns": sum(k["driver_ns"]["sum"] for k in kernels),
            "py_to_driver_ns": sum(py_total) if py_total else None,
            "gpu_ns": sum(k["gpu_ns"]["sum"] for k in kernels) if on else None,
            "gpu_busy_ns": gpu_busy if on else None,
            "starved_ns": sum(k["starved_ns"] for k in kernels) if on else None,
            "dropped_records": 0,
            "unnamed_launches": sum(1 for r in records if r["kernel"].startswith("<unknown")),
        },
        "kernels": kernels,
        "events": events_of(records, trace, handles) if trace else [],
    }
    return doc


def dump(doc):
    """One top-level member a line, kernels and events one a line."""
    lines = []
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            inner = ",\n".join("    " + json.dumps(v, separators=(",", ":")) for v in value)
            lines.append('  "%s": [\n%s\n  ]' % (key, inner))
        else:
            lines.append('  "%s": %s' % (key, json.dumps(value, separators=(",", ":"))))
    return "{\n" + ",\n".join(lines) + "\n}\n"


# ---- the fixtures ----

def basic():
    p = Process(4242, seed=1, fastpath=True)
    p.thread(4242, 7, 2_000_000)
    p.thread(4250, 13, 3_700_000)
    add = Kernel("add_kernel", py=60000, driver=5000, gpu=3000, sites=("train.py:42", "train.py:57"))
    mm = Kernel("matmul_kernel", py=55000, driver=6000, gpu=150000, sites=("model.py:118",), grid=(64, 32, 1))
    sm = Kernel("softmax_kernel", py=50000, driver=5000, gpu=8000, sites=("model.py:131",))
    red = Kernel("void reduce_kernel<float, 256>(float const*, float*, int)", gpu=20000, runtime=True, sites=())
    unk = Kernel("<unknown 0x7f3a2c001200>", driver=4000, gpu=5000, site_kind="native", sites=(), module=None)
    for i in range(400):
        p.launch(4242, add)
        if i % 4 == 0:
            p.launch(4242, mm)
        if i % 8 == 0:
            p.launch(4242, red)
        if i % 13 == 0:
            p.launch(4242, unk)
        if i % 2 == 0:
            p.launch(4250, sm, gap=90000)
    number_launches(p.records)
    meta = {"pid": 4242, "rank": 0, "world_size": 2}
    return report(meta, p.records, fastpath="on", trace=16)


def nocupti():
    p = Process(5151, seed=2, cupti=False)
    p.thread(5151, 7, 1_000_000)
    sites = ("libbench.so!run_batch+0x4c", "libbench.so!warmup+0x18")
    nop = Kernel("nop_with_args_kernel", driver=2500, site_kind="native", sites=sites, module="bench.cubin")
    sax = Kernel("saxpy", driver=3000, site_kind="native", sites=sites[:1], module="bench.cubin")
    cp = Kernel("copy_kernel", driver=15000, site_kind="native", sites=sites[1:], module="bench.cubin")
    for i in range(1000):
        p.launch(5151, nop, gap=1500)
        if i % 3 == 0:
            p.launch(5151, sax, gap=1500)
        if i % 100 == 0:
            p.launch(5151, cp, gap=1500)
    number_launches(p.records)
    meta = {"pid": 5151, "argv0": "bench", "host": "dev-box"}
    return report(meta, p.records, cupti="off", stacks=True)


def diff_variant(pid, add_py, extra):
    p = Process(pid, seed=3)
    p.thread(pid, 7, 1_000_000)
    add = Kernel("add_kernel", py=add_py, driver=10000, gpu=30000, sites=("train.py:42",))
    mul = Kernel("mul_kernel", py=30000, driver=8000, gpu=50000, sites=("train.py:48",))
    other = Kernel(extra, py=25000, driver=7000, gpu=10000, sites=("train.py:60",))
    for i in range(300):
        p.launch(pid, add)
        p.launch(pid, mul)
        if i % 10 == 0:
            p.launch(pid, other)
    number_launches(p.records)
    return report({"pid": pid, "rank": None}, p.records)


def ranks():
    """Three ranks of one job and the report of all their launches."""
    procs = []
    for rank in range(3):
        pid = 3001 + rank
        p = Process(pid, seed=10 + rank, fastpath=True)
        p.thread(pid, 7, 1_500_000 + rank * 100_000)
        att = Kernel("attention_kernel", py=70000, driver=6000, gpu=90000, sites=("model.py:210",),
                     grid=(32, 8, 1))
        ln = Kernel("layernorm_kernel", py=45000, driver=5000, gpu=6000, sites=("model.py:198", "model.py:230"))
        emb = Kernel("embedding_kernel", py=40000, driver=5000, gpu=4000,
                     sites=tuple("data.py:%d" % (10 + 3 * (rank * 3 + j)) for j in range(6)))
        ar = Kernel("void ncclAllReduceKernel<float>(ncclDevComm*, unsigned long, ncclWork*)", gpu=150000,
                    runtime=True, sites=())
        for i in range(150 + 40 * rank):
            p.launch(pid, ln)
            p.launch(pid, att)
            p.launch(pid, ln)
            if i % 3 == rank % 3:
                p.launch(pid, emb)
            if i % 10 == 0:
                p.launch(pid, ar)
        number_launches(p.records)
        procs.append(p)
    docs = [report({"pid": p.pid, "rank": r, "world_size": 3}, p.records, fastpath="on", trace=8,
                   epoch=r * 1_000_000) for r, p in enumerate(procs)]
    records = [rec for p in procs for rec in p.records]
    combined = report({"pid": 3000, "world_size": 3}, records, fastpath="on",
                      gpu_busy=sum(d["totals"]["gpu_busy_ns"] for d in docs),
                      threads=sum(d["totals"]["threads"] for d in docs))
    return docs, combined


# ---- checking ----

def check_stats(where, st):
    """A STATS as the library writes it: hist adds up to count, min and max
    in the first and last buckets, percentiles as the scheme computes them."""
    s = Stat()
    s.count, s.sum, s.min, s.max = st["count"], st["sum"], st["min"], st["max"]
    for i, n in st["hist"]:
        s.hist[i] = n
    buckets = [i for i, _ in st["hist"]]
    problems = []
    if sum(s.hist) != s.count:
        problems.append("hist adds up to %d, count is %d" % (sum(s.hist), s.count))
    if s.count and (hist_index(s.min) != buckets[0] or hist_index(s.max) != buckets[-1]):
        problems.append("min or max outside the first or last bucket")
    if s.count and not s.count * s.min <= s.sum <= s.count * s.max:
        problems.append("sum outside count*[min, max]")
    for q, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        if st[key] != s.quantile(q):
            problems.append("%s is %d, the scheme gives %d" % (key, st[key], s.quantile(q)))
    if problems:
        sys.exit("%s: %s" % (where, "; ".join(problems)))


def check(path):
    doc = json.load(open(path))
    for k in doc["kernels"]:
        for key in ("driver_ns", "gap_ns", "py_to_driver_ns", "gpu_ns"):
            if k[key] is not None:
                check_stats("%s: %s.%s" % (path, k["name"], key), k[key])
    t, ks = doc["totals"], doc["kernels"]
    sums = {"launches": sum(k["launches"] for k in ks), "kernels": len(ks),
            "driver_ns": sum(k["driver_ns"]["sum"] for k in ks)}
    for key, want in sums.items():
        if t[key] != want:
            sys.exit("%s: totals.%s is %d, the kernels add up to %d" % (path, key, t[key], want))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        for path in sys.argv[2:]:
            check(path)
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {"basic.json": basic(), "nocupti.json": nocupti(),
             "base.json": diff_variant(100, 60000, "old_kernel"),
             "regressed.json": diff_variant(200, 340000, "new_kernel"),
             "improved.json": diff_variant(300, 40000, "old_kernel")}
    docs, combined = ranks()
    for i, d in enumerate(docs):
        files["rank%d.json" % i] = d
    files["combined.json"] = combined
    for name, doc in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(dump(doc))


if __name__ == "__main__":
    main()
