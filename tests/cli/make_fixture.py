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

hooked0..1.json are two ranks of a Triton job with the fields added later:
kernels' `errors`, the `python` and `gpu` objects, starved events with a
`scope` (device-wide and per stream) and GPU events with `cupti_corr`.
latectx.json is a C program whose CUDA context predates trlat: CUPTI timed
every kernel but none joined its launch (docs/CUPTI.md, "Known limit").
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
                 site_kind="python", module=None, grid=(4, 1, 1), block=(128, 1, 1), errors_every=0,
                 first_py=None, first_driver=None):
        self.name, self.py, self.driver, self.gpu = name, py, driver, gpu
        # The first launch's times when not like the others (a Triton
        # kernel's first call compiles it; a first launch loads its module).
        self.first_py, self.first_driver = first_py, first_driver
        self.runtime, self.sites, self.site_kind, self.module = runtime, sites, site_kind, module
        self.grid, self.block = grid, block
        self.errors_every = errors_every  # every Nth launch is refused by the driver


def jitter(rng, mean, spread=0.2):
    return max(1, int(rng.lognormvariate(math.log(mean), spread)))


class Process:
    def __init__(self, pid, seed, cupti=True, fastpath=False):
        self.pid, self.rng, self.cupti, self.fastpath = pid, random.Random(seed), cupti, fastpath
        self.records = []
        self.threads = {}  # tid -> [host clock, stream, stream free at, launches so far]
        self.kernel_launches = {}

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
            first = k.name not in self.kernel_launches
            if first and k.first_py is not None:
                py = k.first_py
            r["py"], r["py_start"] = py, th[0] if py is not None else None
            r["start"] = th[0] + (py or 0)
            r["driver"] = k.first_driver if first and k.first_driver is not None else jitter(rng, k.driver)
            r["end"] = r["start"] + r["driver"]
            r["site"] = k.sites[rng.randrange(len(k.sites))] if k.sites else None
            th[0] = r["end"]
            th[3] += 1
        n = self.kernel_launches[k.name] = self.kernel_launches.get(k.name, 0) + 1
        r["error"] = bool(k.errors_every) and n % k.errors_every == 0
        if r["error"]:  # refused: host time, no kernel on the GPU
            r["gpu"] = r["starved_iv"] = None
        elif self.cupti:
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


def device_starved(records):
    """Device-wide starvation (what the library counts per kernel): kernels
    walked in GPU start order; an idle interval of the whole device that
    began before the kernel's launch entered the driver counts to it."""
    latest = None
    for r in sorted((r for r in records if r["gpu"] is not None), key=lambda r: r["gpu_start"]):
        r["dev_starved_iv"] = None
        if latest is not None and latest < r["gpu_start"] and latest < r["start"]:
            r["dev_starved_iv"] = (latest, r["gpu_start"])
        latest = r["gpu_end"] if latest is None else max(latest, r["gpu_end"])


def starved_iv(r):
    """The interval a kernel's starved_ns counts: device-wide when the
    fixture computed it, else the stream's (the older fixtures)."""
    return r.get("dev_starved_iv") if "dev_starved_iv" in r else r["starved_iv"]


# ---- reports ----

def kernel_entries(records, cupti, fastpath, with_errors=False):
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
            if cupti and r["gpu"] is not None:
                gpu.add(r["gpu"])
                iv = starved_iv(r)
                if iv:
                    starved += iv[1] - iv[0]
                    starved_launches += 1
            if fp is not None and r.get("fastpath"):
                if r["fastpath"] == "hit":
                    fp["hits"] += 1
                else:
                    fp["misses"] += 1
                    reason = r["fastpath"].split(":", 1)[1]
                    fp["fallbacks"][reason] = fp["fallbacks"].get(reason, 0) + 1
            if r["site"]:
                s = sites.setdefault(r["site"], [r["kind"], 0, 0, 0])
                s[1] += 1
                s[2] += r["gap"] or 0
                s[3] += r["py"] or 0
        if fp:
            fp["fallbacks"] = dict(sorted(fp["fallbacks"].items(), key=lambda kv: (-kv[1], kv[0])))
        ranked = sorted(sites.items(), key=lambda kv: (-kv[1][1], kv[0]))
        # a Python site's host time before its launches (gap_ns) and the
        # Triton calls' part of it (here their py->driver)
        call_sites = [dict({"site": s, "kind": kind, "launches": n},
                           **({"gap_ns": gap, "triton_ns": tri} if kind == "python" else {}))
                      for s, (kind, n, gap, tri) in ranked[:8]]
        if len(ranked) > 8:
            call_sites.append({"site": "(other)", "kind": "other", "launches": sum(v[1] for _, v in ranked[8:]),
                               "gap_ns": sum(v[2] for _, v in ranked[8:] if v[0] == "python"),
                               "triton_ns": sum(v[3] for _, v in ranked[8:] if v[0] == "python")})
        entry = {
            "name": name, "module": rs[0]["module"], "launches": len(rs),
            "sources": {"driver": sum(r["source"] == "driver" for r in rs),
                        "runtime": sum(r["source"] == "runtime" for r in rs)},
        }
        if with_errors:
            entry["errors"] = sum(r["error"] for r in rs)
        out.append(dict(entry, **{
            "driver_ns": driver.to_json(), "gap_ns": gap.to_json(),
            "py_to_driver_ns": py.to_json() if py else None,
            "gpu_ns": gpu.to_json() if gpu else None,
            "starved_ns": starved if cupti else None,
            "starved_launches": starved_launches if cupti else None,
            "fastpath": fp, "call_sites": call_sites,
            "_host": driver.sum + (py.sum if py else 0),
        }))
    out.sort(key=lambda k: (-k["_host"], k["name"]))
    for k in out:
        del k["_host"]
    return out


def events_of(records, n, stream_handles, scoped=False, joined=True, device=0):
    """The last n host launches, their GPU kernels and starved intervals.
    scoped: the newer form (starved "scope", GPU "cupti_corr"); joined:
    False when no kernel record met its launch (corr null, source runtime)."""
    host = [r for r in records if r["source"] == "driver"]
    host.sort(key=lambda r: r["start"])
    ev = []
    for r in host[len(host) - n:] if n else []:
        ev.append({"kind": "launch", "tid": r["tid"], "kernel": r["kernel"], "start_ns": r["start"],
                   "end_ns": r["end"], "py_ns": r["py_start"], "stream": stream_handles[r["stream"]],
                   "corr": r["corr"], "grid": list(r["grid"]), "block": list(r["block"])})
        if r["gpu"] is not None and not scoped:
            ev.append({"kind": "gpu", "kernel": r["kernel"], "device": device, "stream": r["stream"],
                       "start_ns": r["gpu_start"], "end_ns": r["gpu_end"], "corr": r["corr"],
                       "source": "driver"})
        elif r["gpu"] is not None:
            ev.append({"kind": "gpu", "kernel": r["kernel"], "device": device, "stream": r["stream"],
                       "start_ns": r["gpu_start"], "end_ns": r["gpu_end"], "corr": r["corr"] if joined else None,
                       "cupti_corr": 70000 + r["corr"], "source": "driver" if joined else "runtime"})
        if r["starved_iv"] and not scoped:
            ev.append({"kind": "starved", "kernel": r["kernel"], "device": device, "stream": r["stream"],
                       "start_ns": r["starved_iv"][0], "end_ns": r["starved_iv"][1]})
        for scope, iv in (("device", r.get("dev_starved_iv")), ("stream", r["starved_iv"])) if scoped else ():
            if iv:
                ev.append({"kind": "starved", "scope": scope, "kernel": r["kernel"], "device": device,
                           "stream": r["stream"], "start_ns": iv[0], "end_ns": iv[1]})
    ev.sort(key=lambda e: e["start_ns"])
    return ev


def number_launches(records):
    for i, r in enumerate(sorted(records, key=lambda r: (r["start"], r["tid"]))):
        r["corr"] = i + 1


def report(meta, records, cupti="on", fastpath="off", stacks=False, trace=0, gpu_busy=None,
           threads=None, epoch=0, newer=None, timing=None):
    """newer: for the fields added later, {"python": obj or None, "gpu": obj
    or None, "joined": bool, "device": n, "dropped": n}; None for the
    older form."""
    on = cupti == "on"
    kernels = kernel_entries(records, on, fastpath != "off", with_errors=newer is not None)
    handles = {7: "0x55d0c0a3e000", 13: "0x55d0c0b41200"}
    end = max((r.get("gpu_end") or r["end"]) for r in records)
    if gpu_busy is None and on:
        gpu_busy = union_length([(r["gpu_start"], r["gpu_end"]) for r in records if r["gpu"] is not None])
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
            "dropped_records": newer["dropped"] if newer else 0,
            "unnamed_launches": sum(1 for r in records if r["kernel"].startswith("<unknown")),
        },
    }
    if timing:
        doc["config"]["timing"] = timing
    if newer:
        doc["python"] = newer["python"]
        if newer["gpu"] is not None:
            doc["gpu"] = newer["gpu"]
    doc["kernels"] = kernels
    if newer:
        doc["events"] = events_of(records, trace, handles, True, newer["joined"], newer["device"]) if trace else []
    else:
        doc["events"] = events_of(records, trace, handles) if trace else []
    return doc


def python_object(records, warmup=0, error=0, other=0, nested=0, version="3.6.0"):
    """The hook's counts for a process whose Python calls each launched once."""
    one = sum(r["py"] is not None for r in records)
    return {"hook": "installed", "triton_version": version, "reason": None,
            "calls": one + warmup + error + other, "nested_calls": nested, "calls_one_launch": one,
            "calls_multi_launch": 0, "calls_without_launch": {"warmup": warmup, "error": error, "other": other}}


def gpu_object(records, joined=True, dropped=0):
    """The GPU statistics's counters, as the library computes them (one device)."""
    timed = [r for r in records if r["gpu"] is not None]
    dev = [r["dev_starved_iv"] for r in timed if r.get("dev_starved_iv")]
    return {"kernel_records": len(timed), "devices": 1,
            "busy_ns": union_length([(r["gpu_start"], r["gpu_end"]) for r in timed]),
            "starved_ns": sum(e - s for s, e in dev), "starved_launches": len(dev),
            "stream_starved_ns": sum(r["starved_iv"][1] - r["starved_iv"][0] for r in timed if r["starved_iv"]),
            "dropped_records": dropped, "untimed_records": 0, "late_records": 0,
            "unjoined_records": 0 if joined else len(timed),
            "joined_by_trlat_id": sum(r["source"] == "driver" for r in timed) if joined else 0,
            "other_kernel_records": 0}


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


def firstcall(pid=6161, first_py=436_000_000, py=2500):
    """A short fast-path run without CUPTI (hits timed 1 in 16): each Triton
    kernel's first call compiled it (436 ms in py->drv; 40 ms: loaded from
    Triton's cache), a torch kernel's first launch loaded its module (2.15 ms
    in the driver)."""
    p = Process(pid, seed=5, cupti=False, fastpath=True)
    p.thread(pid, 7, 1_000_000)
    nop = Kernel("nop_with_args_kernel", py=py, driver=3200, first_py=first_py, sites=("train.py:56",))
    add = Kernel("add_kernel", py=3000, driver=3400, sites=("train.py:60",))
    fill = Kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                  "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
                  driver=4300, first_driver=2_150_000, site_kind="native", sites=())
    for i in range(2000):
        if i % 400 == 0:
            p.launch(pid, fill)
        p.launch(pid, nop, gap=700)
        if i % 2 == 0:
            p.launch(pid, add, gap=700)
    number_launches(p.records)
    meta = {"pid": pid}
    return report(meta, p.records, cupti="off", fastpath="on", timing="sampled")


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


def spread_run(pid, scale):
    """One run of an unchanged workload on a machine whose speed drifts from
    process to process: every host time scaled by `scale` (run*.json: the
    same workload at 0.95..1.13; slow*.json: twice as slow)."""
    p = Process(pid, seed=pid)
    p.thread(pid, 7, 1_000_000)
    add = Kernel("add_kernel", py=int(20000 * scale), driver=int(5000 * scale), gpu=30000, sites=("train.py:42",))
    mul = Kernel("mul_kernel", py=int(25000 * scale), driver=int(6000 * scale), gpu=20000, sites=("train.py:48",))
    for _ in range(400):
        p.launch(pid, add)
        p.launch(pid, mul)
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


def hooked():
    """Two ranks of a Triton job on GPUs 0 and 1, two launching threads
    each; launch errors in both, python and gpu objects, scoped events."""
    docs = []
    for rank in range(2):
        pid = 6001 + rank
        p = Process(pid, seed=20 + rank)
        p.thread(pid, 7, 1_200_000 + rank * 50_000)
        p.thread(pid + 10, 13, 1_260_000 + rank * 50_000)
        mm = Kernel("matmul_kernel", py=40000, driver=6000, gpu=60000, sites=("model.py:88",), grid=(64, 16, 1))
        add = Kernel("add_kernel", py=30000, driver=5000, gpu=4000, sites=("model.py:91",))
        sc = Kernel("scatter_kernel", py=35000, driver=5500, gpu=9000, sites=("loss.py:17",),
                    errors_every=20 - 8 * rank)
        ar = Kernel("void ncclAllReduceKernel<float>(ncclDevComm*, unsigned long, ncclWork*)", gpu=120000,
                    runtime=True, sites=())
        for i in range(120 + 30 * rank):
            p.launch(pid, mm)
            p.launch(pid, add)
            p.launch(pid + 10, sc, gap=30000)
            p.launch(pid + 10, add, gap=15000)
            if i % 15 == 0:
                p.launch(pid, ar)
        number_launches(p.records)
        device_starved(p.records)
        newer = {"python": python_object(p.records, warmup=4, error=rank * 2, nested=3 * rank),
                 "gpu": gpu_object(p.records), "joined": True, "device": rank, "dropped": 0}
        docs.append(report({"pid": pid, "rank": rank, "world_size": 2}, p.records, trace=12,
                           epoch=rank * 500_000, newer=newer))
    return docs


def latectx():
    """No GPU record joined a launch (what trlat's former records join gave
    a C program that made its CUDA context first): every kernel record
    timed, none joined (no starvation), some dropped."""
    p = Process(7070, seed=30)
    p.thread(7070, 7, 900_000)
    nop = Kernel("nop_with_args_kernel", driver=3000, gpu=2000, site_kind="native", sites=(), module=None)
    for i in range(500):
        p.launch(7070, nop, gap=2000)
    number_launches(p.records)
    for r in p.records:
        r["starved_iv"] = r["dev_starved_iv"] = None
    newer = {"python": None, "gpu": gpu_object(p.records, joined=False, dropped=12), "joined": False,
             "device": 0, "dropped": 12}
    meta = {"pid": 7070, "argv0": "bench_launch", "host": "gpu-node-1"}
    return report(meta, p.records, trace=6, newer=newer)


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
        if k.get("errors", 0) > k["launches"]:
            sys.exit("%s: %s: more errors than launches" % (path, k["name"]))
    t, ks = doc["totals"], doc["kernels"]
    sums = {"launches": sum(k["launches"] for k in ks), "kernels": len(ks),
            "driver_ns": sum(k["driver_ns"]["sum"] for k in ks)}
    for key, want in sums.items():
        if t[key] != want:
            sys.exit("%s: totals.%s is %d, the kernels add up to %d" % (path, key, t[key], want))
    gpu = doc.get("gpu")
    if gpu:
        same = {"busy_ns": "gpu_busy_ns", "starved_ns": "starved_ns", "dropped_records": "dropped_records"}
        for key, total in same.items():
            if gpu[key] != t[total]:
                sys.exit("%s: gpu.%s is %d, totals.%s %d" % (path, key, gpu[key], total, t[total]))
        if gpu["unjoined_records"] > gpu["kernel_records"]:
            sys.exit("%s: more unjoined GPU records than kernel records" % path)
    py = doc.get("python")
    if py and py["calls_one_launch"] + py["calls_multi_launch"] + sum(py["calls_without_launch"].values()) \
            != py["calls"]:
        sys.exit("%s: python calls do not add up" % path)


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
    for i, scale in enumerate((1.00, 1.08, 0.95, 1.13, 0.98, 1.04)):
        files["run%d.json" % (i + 1)] = spread_run(8001 + i, scale)
    for i, scale in enumerate((2.0, 2.1, 1.9)):
        files["slow%d.json" % (i + 1)] = spread_run(8101 + i, scale)
    docs, combined = ranks()
    for i, d in enumerate(docs):
        files["rank%d.json" % i] = d
    files["combined.json"] = combined
    for i, d in enumerate(hooked()):
        files["hooked%d.json" % i] = d
    files["latectx.json"] = latectx()
    files["firstcall.json"] = firstcall()
    files["firstcall_warm.json"] = firstcall(6262, first_py=40_000_000)  # Triton's cache warm
    files["firstcall_slower.json"] = firstcall(6363, first_py=40_000_000, py=12000)  # and every call slower
    for name, doc in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(dump(doc))


if __name__ == "__main__":
    main()
