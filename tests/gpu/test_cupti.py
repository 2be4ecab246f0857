"""Issue 3 on the GPU: CUPTI's GPU truth in trlat's report.
  python3 tests/gpu/test_cupti.py          (or scripts/gpu-test.sh test_cupti.py)
Each workload (tests/gpu/cupti_workloads.py) runs in its own process under
LD_PRELOAD=build/libtrlat.so with TRLAT_OUTPUT set; the report is read back.
Prints PASS/FAIL lines with the numbers, INFO lines, TABLE lines, and
"N passed, N failed" last. Exit status 0 when everything passed."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BENCH, BUILD, LIB, check, kernel, run, summary  # noqa: E402

W = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cupti_workloads.py")
ON = {"TRLAT_CUPTI": "1"}


def wl(mode, env=None, timeout=600, **kw):
    return run([sys.executable, W, mode], env={**ON, **(env or {})}, timeout=timeout, **kw)


def val(out, key):
    m = re.search(rf"^{key}=([-0-9.e]+)$", out, re.M)
    return float(m.group(1)) if m else None


def cupti_on(name, rep, err):
    ok = rep is not None and rep["config"]["cupti"] == "on"
    why = "no report" if rep is None else f"cupti={rep['config']['cupti']} reason={rep['config']['cupti_reason']}"
    return check(f"{name}: CUPTI on", ok, "" if ok else f"{why}; stderr: {err[-400:]}")


def mean(s):
    return s["sum"] / s["count"] if s and s["count"] else None


def starvation_from_trace(rep):
    """Recomputes device starvation from the report's trace events by the
    definition: per device, kernels in GPU start order keeping the latest
    end; a kernel starting after it ends an idle interval, which counts as
    starved when it began before the kernel's launch call entered the driver
    (the launch event's start_ns, found by corr). The first kernel of a
    device ends no interval. Returns (starved launches, starved ns, kernels,
    kernels without their launch event)."""
    ev = rep.get("events", [])
    t0 = {e["corr"]: e["start_ns"] for e in ev if e["kind"] == "launch" and e.get("corr")}
    gpu = sorted((e for e in ev if e["kind"] == "gpu"), key=lambda e: (e["device"], e["start_ns"], e["cupti_corr"]))
    n = ns = missing = 0
    end = {}
    for e in gpu:
        call = t0.get(e["corr"])
        missing += call is None
        prev = end.get(e["device"])
        if prev is not None and e["start_ns"] > prev and call is not None and prev < call:
            n += 1
            ns += e["start_ns"] - prev
        end[e["device"]] = max(prev or 0, e["end_ns"])
    return n, ns, len(gpu), missing


# 1. Triton and torch kernels together: every kernel counted once (its
# launches are its GPU records), torch's through trlat's cuGetProcAddress
# wrapper or seen only through CUPTI, whichever way they come.
out, err, rc, rep = wl("mix")
check("mix: runs", rc == 0, err[-400:])
if cupti_on("mix", rep, err):
    add = kernel(rep, "add_kernel")
    check("mix: add_kernel from the driver path, every launch with its GPU time",
          add and add["sources"] == {"driver": 200, "runtime": 0} and add["gpu_ns"]["count"] == 200,
          f"{add and (add['sources'], add['gpu_ns'] and add['gpu_ns']['count'])}")
    torch_k = [k for k in rep["kernels"] if k["name"] != "add_kernel" and k["gpu_ns"] and k["gpu_ns"]["count"]]
    check("mix: torch's kernels in the report with GPU times",
          len(torch_k) >= 3 and sum(k["gpu_ns"]["count"] for k in torch_k) >= 600,
          f"{[(k['name'][:60], k['sources'], k['gpu_ns']['count']) for k in torch_k[:6]]}")
    twice = [(k["name"][:60], k["launches"], k["sources"], k["gpu_ns"] and k["gpu_ns"]["count"])
             for k in rep["kernels"] if not k["gpu_ns"] or k["launches"] != k["gpu_ns"]["count"]]
    check("mix: every kernel counted once (launches == its GPU records)", not twice, f"{twice[:6]}")
    print(f"INFO mix torch kernels' sources: {[(k['name'][:40], k['sources']) for k in torch_k[:6]]}")
    check("mix: C++ kernel names demangled", any("::" in k["name"] or "(" in k["name"] for k in torch_k),
          f"{[k['name'][:80] for k in torch_k[:3]]}")
    t = rep["totals"]
    check("mix: totals: GPU busy <= GPU sum, starved = kernels' sum",
          t["gpu_busy_ns"] and t["gpu_busy_ns"] <= t["gpu_ns"] + 1
          and t["starved_ns"] == sum(k["starved_ns"] or 0 for k in rep["kernels"]),
          f"busy={t['gpu_busy_ns']} gpu={t['gpu_ns']} starved={t['starved_ns']}")
    g = rep.get("gpu", {})
    check("mix: no record dropped, unjoined or lost",
          g.get("dropped_records") == 0 and g.get("unjoined_records") == 0 and g.get("lost_join_records") == 0,
          f"{g}")
    print(f"INFO mix gpu section: {g}")

# 2. A loop of tiny kernels: the GPU waits for the host most of the time.
out, err, rc, rep = wl("tiny")
check("tiny: runs", rc == 0, err[-400:])
k = (kernel(rep, "tiny_kernel") or {}) if cupti_on("tiny", rep, err) else None
if k is not None and check("tiny: tiny_kernel in the report with GPU times", k.get("gpu_ns"), f"{k}"):
    share = k["starved_ns"] / (k["starved_ns"] + k["gpu_ns"]["sum"]) if k and k["gpu_ns"] else 0
    print(f"TABLE cupti_tiny us_per_launch {val(out, 'us_per_launch')} gpu_mean_ns {mean(k['gpu_ns']):.0f} "
          f"starved_share {share:.3f} starved_launches {k['starved_launches']}/{k['launches']}")
    check("tiny: high starved share (starved / (starved + GPU time) > 0.5)", share > 0.5,
          f"{share:.3f}, starved_launches {k['starved_launches']} of {k['launches']}")

# 3. A loop of large kernels (a few ms each): the GPU never waits. The first
# launch of a Triton kernel builds its launcher while the GPU idles (really
# starved, ~0.2 s), so the share is judged on the steady-state loop: the
# events TRLAT_TRACE=80 keeps for the last 80 launches.
out, err, rc, rep = wl("large", env={"TRLAT_TRACE": "80"})
check("large: runs", rc == 0, err[-400:])
k = (kernel(rep, "spin_kernel") or {}) if cupti_on("large", rep, err) else None
if k is not None and check("large: spin_kernel in the report with GPU times", k.get("gpu_ns"), f"{k}"):
    share = k["starved_ns"] / k["gpu_ns"]["sum"] if k and k["gpu_ns"] and k["gpu_ns"]["sum"] else 1
    print(f"TABLE cupti_large gpu_mean_ms {mean(k['gpu_ns']) / 1e6:.3f} starved_share {share:.5f} "
          f"starved_launches {k['starved_launches']}/{k['launches']}")
    ev = [e for e in rep.get("events", []) if e.get("kernel") == "spin_kernel"]
    gpu = sum(e["end_ns"] - e["start_ns"] for e in ev if e["kind"] == "gpu")
    starved = sum(e["end_ns"] - e["start_ns"] for e in ev if e["kind"] == "starved" and e.get("scope") == "device")
    steady = starved / gpu if gpu else 1
    print(f"TABLE cupti_large_steady gpu_events {sum(e['kind'] == 'gpu' for e in ev)} starved_share {steady:.5f}")
    check("large: starved share near zero over the steady loop (starved / GPU time < 0.02)", gpu and steady < 0.02,
          f"{steady:.5f} over the last 80 launches; whole run {share:.5f} ({k['starved_launches']} of "
          f"{k['launches']} launches starved); {out.strip()}")

# 4. GPU time against triton.testing.do_bench for the same kernel.
out, err, rc, rep = wl("dobench")
check("dobench: runs", rc == 0, err[-400:])
k = (kernel(rep, "add_kernel") or {}) if cupti_on("dobench", rep, err) else None
if k is not None and check("dobench: add_kernel in the report with GPU times", k.get("gpu_ns"), f"{k}"):
    ms = val(out, "dobench_ms")
    ours = mean(k["gpu_ns"]) / 1e6 if k else None
    rel = abs(ours - ms) / ms if ms and ours else 1
    print(f"TABLE cupti_vs_do_bench do_bench_ms {ms} trlat_gpu_mean_ms {ours:.6f} rel_diff {rel:.4f} launches {k['launches']}")
    check("dobench: mean GPU time within 5% of do_bench", rel < 0.05, f"trlat {ours:.4f} ms, do_bench {ms:.4f} ms")

# 5. The raw C loop (bench_launch makes its CUDA context before trlat starts):
# every cuLaunchKernelEx joined exactly with its kernel record.
N = 20000
out, err, rc, rep = run([BENCH, str(N)], env=ON)
check("C loop: runs", rc == 0, err[-400:])
if cupti_on("C loop", rep, err):
    k = kernel(rep, "nop16")
    g = rep.get("gpu") or {}
    check("C loop: sources.driver == GPU records == launches, runtime 0",
          k and k["sources"] == {"driver": N + 2000, "runtime": 0} and k["gpu_ns"] and k["gpu_ns"]["count"] == N + 2000,
          f"{k and (k['sources'], k['gpu_ns'] and k['gpu_ns']['count'])}")
    check("C loop: every GPU record joined with trlat's launch, none lost",
          g.get("joined_by_trlat_id") == N + 2000 and g.get("unjoined_records") == 0
          and g.get("lost_join_records") == 0, f"{g}")
    check("C loop: no self-check line on stderr", "no launch callback" not in err, err[-300:])

# 5b. The same C loop with every launch and kernel kept as trace events
# (the launch path's slow variant): the join again, and starvation
# recomputed from the events by the definition (a launch starves the GPU
# only when the idle interval began before its launch call entered the
# driver) must match the report's counters. Whether this loop starves is
# not assumed: it launches every ~4 us with a ~6 us launch-to-start latency,
# so most idle intervals begin after the next call entered the driver.
out, err, rc, rep = run([BENCH, str(N)], env={**ON, "TRLAT_TRACE": str(N + 4000)})
check("C loop, traced: runs", rc == 0, err[-400:])
if cupti_on("C loop, traced", rep, err):
    k = kernel(rep, "nop16")
    g = rep.get("gpu") or {}
    check("C loop, traced: every GPU record joined with trlat's launch, none lost",
          k and k["sources"] == {"driver": N + 2000, "runtime": 0} and g.get("joined_by_trlat_id") == N + 2000
          and g.get("unjoined_records") == 0 and g.get("lost_join_records") == 0, f"{k and k['sources']} {g}")
    if k and k["gpu_ns"]:
        n, ns, traced, missing = starvation_from_trace(rep)
        ev = rep.get("events", [])
        launches = sorted((e["start_ns"], e["corr"]) for e in ev if e["kind"] == "launch")
        gpu = {e["corr"]: e for e in ev if e["kind"] == "gpu" and e.get("corr")}
        lat = sorted(gpu[c]["start_ns"] - t for t, c in launches if c in gpu)
        per = sorted(b[0] - a[0] for a, b in zip(launches, launches[1:]))
        mid = lambda xs: xs[len(xs) // 2] if xs else None  # noqa: E731
        share = k["starved_ns"] / (k["starved_ns"] + k["gpu_ns"]["sum"]) if k["gpu_ns"]["sum"] else 0
        print(f"TABLE cupti_c_loop starved_launches {k['starved_launches']}/{k['launches']} starved_ns "
              f"{k['starved_ns']} starved_share {share:.3f} recomputed_launches {n} recomputed_ns {ns} traced {traced} "
              f"gpu_mean_ns {mean(k['gpu_ns']):.0f} launch_period_ns {mid(per)} launch_latency_ns {mid(lat)}")
        # Every launch and kernel is kept, so the two must agree exactly; a
        # kernel whose launch or GPU event was not kept may change one
        # interval each.
        tol = missing + max(0, k["launches"] - traced)
        big = tol * 10 * (k["gpu_ns"]["max"] + (mid(per) or 0) + (mid(lat) or 0))
        check("C loop, traced: starvation recomputed from the trace events matches the report's counters",
              abs(n - k["starved_launches"]) <= tol and abs(n - g.get("starved_launches", -1)) <= tol
              and abs(ns - k["starved_ns"]) <= big,
              f"recomputed {n} launches {ns} ns over {traced} kernels ({missing} without their launch event); "
              f"report {k['starved_launches']} launches {k['starved_ns']} ns, gpu.starved_launches "
              f"{g.get('starved_launches')}")

# 6. Sharing CUPTI.
#  a) torch.profiler with TRLAT_CUPTI=0: the user's profiler works, trlat is host-only.
out, err, rc, rep = wl("profiler", env={"TRLAT_CUPTI": "0"})
n = val(out, "profiler_kernels")
check("TRLAT_CUPTI=0: torch.profiler works (sees CUDA kernels)", rc == 0 and n and n > 0,
      f"rc={rc} profiler_kernels={n} {err[-300:]}")
check("TRLAT_CUPTI=0: report says off", rep and rep["config"]["cupti"] == "off")
#  b) torch.profiler started after trlat (TRLAT_CUPTI=auto): neither crashes.
out, err, rc, rep = wl("profiler", env={"TRLAT_CUPTI": "auto"})
n = val(out, "profiler_kernels")
check("TRLAT_CUPTI=auto + torch.profiler after trlat: no crash, report written", rc == 0 and rep is not None,
      f"rc={rc} {err[-400:]}")
print(f"INFO TRLAT_CUPTI=auto + torch.profiler: profiler_kernels={n}, trlat cupti="
      f"{rep and rep['config']['cupti']}, trlat GPU records={rep and rep.get('gpu', {}).get('kernel_records')}; "
      f"profiler stderr: {' | '.join(l for l in err.splitlines() if 'CUPTI' in l or 'cupti' in l)[:400]}")
#  c) another CUPTI client already subscribed: trlat (auto) stands aside.
mini = os.path.join(BUILD, "tests", "gpu", "libcupti_min.so")
if os.path.exists(mini):
    out_path = os.path.join(tempfile.mkdtemp(prefix="trlat-gpu-"), "standaside.json")
    e = dict(os.environ, TRLAT_CUPTI="auto", TRLAT_SUMMARY="0", LD_PRELOAD=f"{mini} {LIB}", TRLAT_OUTPUT=out_path)
    p = subprocess.run([BENCH, "2000"], env=e, capture_output=True, text=True, timeout=300)
    try:
        r = json.load(open(out_path))
        os.unlink(out_path)
    except Exception:
        r = None
    check("another CUPTI client first: trlat stands aside, says so",
          p.returncode == 0 and r and r["config"]["cupti"] == "unavailable" and "another CUPTI client" in (r["config"]["cupti_reason"] or ""),
          f"rc={p.returncode} {r and r['config']} {p.stderr[-300:]}")
else:
    print(f"INFO skipped stand-aside test: no {mini} (make build/tests/gpu/libcupti_min.so)")

# 7. The fast path: TRLAT_CUPTI's default (auto) stays off under TRLAT_FASTPATH=1
# (CUPTI costs every launch as much as a replay); asked for, every replay's
# kernel record joins its launch.
out, err, rc, rep = wl("tiny", env={"TRLAT_CUPTI": "auto", "TRLAT_FASTPATH": "1"})
k = kernel(rep, "tiny_kernel") or {}
hits = (k.get("fastpath") or {}).get("hits", 0)
check("fast path, TRLAT_CUPTI=auto: CUPTI off, the report says why, calls replayed",
      rc == 0 and rep and rep["config"]["cupti"] == "off" and
      (rep["config"]["cupti_reason"] or "").startswith("TRLAT_FASTPATH=1") and hits > 4000,
      f"rc={rc} {rep and rep['config']} hits={hits} {err[-300:]}")
out, err, rc, rep = wl("tiny", env={"TRLAT_CUPTI": "1", "TRLAT_FASTPATH": "1"})
k = (kernel(rep, "tiny_kernel") or {}) if cupti_on("fast path, TRLAT_CUPTI=1", rep, err) else {}
hits, g = (k.get("fastpath") or {}).get("hits", 0), (rep or {}).get("gpu") or {}
check("fast path, TRLAT_CUPTI=1: replays have their GPU times, every record joined",
      hits > 4000 and (k.get("gpu_ns") or {}).get("count") == k.get("launches") and
      g.get("unjoined_records") == 0 and g.get("dropped_records") == 0,
      f"hits={hits} launches={k.get('launches')} gpu={(k.get('gpu_ns') or {}).get('count')} {g}")

# 8. Clean ends.
out, err, rc, rep = wl("idle", timeout=120)
check("never launched: exits 0 without hanging", rc == 0 and "idle_done=1" in out, f"rc={rc} {err[-300:]}")
try:
    out, err, rc, rep = wl("exit_thread", timeout=120)
    check("exit() from a launching thread: exits 0, report with GPU records",
          rc == 0 and rep and rep["config"]["cupti"] == "on" and (rep.get("gpu") or {}).get("kernel_records", 0) > 0,
          f"rc={rc} {rep and rep['config']} {err[-300:]}")
except subprocess.TimeoutExpired:
    check("exit() from a launching thread: exits 0", False, "hung (timeout 120 s)")
try:
    out, err, rc, rep = wl("fork", timeout=180)
    k = kernel(rep, "tiny_kernel")
    check("fork: parent and child exit 0, parent's report has its GPU records",
          rc == 0 and "child_status=0" in out and k and k["gpu_ns"] and k["gpu_ns"]["count"] == 200,
          f"rc={rc} {out.strip()} {k and k['gpu_ns'] and k['gpu_ns']['count']} {err[-300:]}")
except subprocess.TimeoutExpired:
    check("fork: exits", False, "hung (timeout 180 s)")

sys.exit(summary())
