#!/usr/bin/env bash
# The CUPTI-on path without a GPU: the fake libcupti (tests/fake/fake_cupti.c)
# sees every launch of the fake driver, calls trlat's launch callbacks with
# the call's correlation id and gives it a kernel record, as the real one
# would, and makes CUDA runtime launches on request. Checks the join (the
# CUDA context made after or before trlat started; runtime launches through
# trlat's wrappers counted once; runtime launches trlat never sees; a full
# join ring), GPU time, starvation, buffers handed back out of order,
# dropped records, threads, fork, exit.
. "$(dirname "$0")/lib.sh"
FAKE_CUPTI=$B/tests/fake/libcupti_fake.so
export TRLAT_CUPTI=1 TRLAT_CUPTI_LIB=$FAKE_CUPTI

run() { # run OUT ENV... -- PROGRAM ARGS
    local out=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" TRLAT_OUTPUT="$WORK/$out.json" LD_PRELOAD=$LIB timeout 60 "$@" >"$WORK/$out.out" 2>"$WORK/$out.err"
}

run d FAKE_CUPTI_KERNEL=direct_kernel -- "$BIN/launcher" direct 3000; rc=$?
expect "runs with CUPTI on" "$rc:$(rq "$WORK/d.json" 'r["config"]["cupti"]')" "0:on"
expect "every launch joined with its kernel record" \
    "$(rq "$WORK/d.json" '(k("direct_kernel")["launches"], k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"])')" \
    "(3000, {'driver': 3000, 'runtime': 0}, 3000)"
expect "GPU time per launch" "$(rq "$WORK/d.json" '(k("direct_kernel")["gpu_ns"]["p50"], r["totals"]["gpu_ns"])')" "(2000, 6000000)"
expect "GPU busy: back-to-back kernels" "$(rq "$WORK/d.json" 'r["totals"]["gpu_busy_ns"]')" 6000000
expect "gpu section: nothing lost, all joined by trlat's id" \
    "$(rq "$WORK/d.json" '[r["gpu"][x] for x in ("kernel_records", "unjoined_records", "late_records", "dropped_records", "joined_by_trlat_id")]')" \
    "[3000, 0, 0, 0, 3000]"
expect "no stderr" "$(cat "$WORK/d.err")" ""

expect "gpu section: lost_join_records 0, no join field" \
    "$(rq "$WORK/d.json" '(r["gpu"]["lost_join_records"], "join" in r["gpu"])')" "(0, False)"

# Runtime launches trlat never sees: their own entries, joined through
# their driver call's callback (not trlat's).
run unseen FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_RUNTIME=3 -- "$BIN/launcher" direct 500
expect "unseen runtime launches: counted once each, as runtime" \
    "$(rq "$WORK/unseen.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], k("_Z14runtime_kernelPf")["sources"], r["gpu"]["joined_by_trlat_id"], r["gpu"]["unjoined_records"])')" \
    "({'driver': 500, 'runtime': 0}, 500, {'driver': 0, 'runtime': 3}, 500, 0)"

# Tiny kernels and no launch latency: the GPU waits for every launch call.
run tiny FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 -- "$BIN/launcher" direct 2000
expect "tiny kernels: starved on (almost) every launch" \
    "$(rq "$WORK/tiny.json" 'k("direct_kernel")["starved_launches"] >= 1990')" True
expect "tiny kernels: totals.starved_ns is the kernels' sum" \
    "$(rq "$WORK/tiny.json" 'r["totals"]["starved_ns"] == sum(x["starved_ns"] for x in r["kernels"]) > 0')" True
# Long kernels: launches queue up, the GPU never waits for the host. (With
# the 2 us kernels above the queue is a few us ahead at most: a loaded
# machine's preemption starves some, so they are not asked.)
run long FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=1000000 -- "$BIN/launcher" direct 2000
expect "long kernels: starved share near zero" \
    "$(rq "$WORK/long.json" '(k("direct_kernel")["starved_launches"] <= 1, k("direct_kernel")["starved_ns"] < 0.01 * k("direct_kernel")["gpu_ns"]["sum"])')" \
    "(True, True)"

# Kernels of the CUDA runtime (no trlat launch): their own entries.
run rt FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_RUNTIME=5 TRLAT_SUMMARY=1 -- "$BIN/launcher" direct 10
expect "runtime kernels: sources.runtime" \
    "$(rq "$WORK/rt.json" '(k("_Z14runtime_kernelPf")["launches"], k("_Z14runtime_kernelPf")["sources"], k("_Z14runtime_kernelPf")["gpu_ns"]["count"])')" \
    "(5, {'driver': 0, 'runtime': 5}, 5)"
expect "runtime kernels: totals.launches counts both" "$(rq "$WORK/rt.json" 'r["totals"]["launches"]')" 15
expect "summary: GPU busy and starved" "$(grep -c 'GPU busy .*starved for the host' "$WORK/rt.err")" 1
run cxx FAKE_CUPTI_KERNEL=_Z10cxx_kernelPfi FAKE_CUPTI_RUNTIME=2 -- "$BIN/cxx_throw"
expect "C++ names demangled when the process has __cxa_demangle; host and GPU in one entry" \
    "$(rq "$WORK/cxx.json" '(k("runtime_kernel(float*)") or {}).get("launches"), k("cxx_kernel(float*, int)")["gpu_ns"]["count"], k("cxx_kernel(float*, int)")["sources"], k("_Z10cxx_kernelPfi")')" "(2, 1000, {'driver': 1000, 'runtime': 0}, None)"

# Python loads C++ runtimes locally (RTLD_LOCAL): the demangler is found anyway.
cat >"$WORK/local_cxx.py" <<'PY'
import ctypes
ctypes.CDLL("libstdc++.so.6")  # locally, like a Python extension module's dependency
cuda = ctypes.CDLL("libcuda.so.1")
f = ctypes.c_void_p()
cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"py_kernel")
for _ in range(10):
    cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None)
PY
run pyc FAKE_CUPTI_KERNEL=py_kernel FAKE_CUPTI_RUNTIME=2 -- python3 "$WORK/local_cxx.py"
expect "demangled with a locally loaded libstdc++" \
    "$(rq "$WORK/pyc.json" '((k("runtime_kernel(float*)") or {}).get("launches"), k("py_kernel")["gpu_ns"]["count"])')" "(2, 10)"

# Buffers handed back newest first, all at the flush: kernel records out of
# start order; tiny kernels, no launch latency: starved on every launch.
run rev FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_HOLD=1 FAKE_CUPTI_REVERSE=1 FAKE_CUPTI_PER_BUFFER=500 \
    FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 -- "$BIN/launcher" direct 5000
expect "buffers out of order: all joined, none late, starvation computed" \
    "$(rq "$WORK/rev.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], r["gpu"]["unjoined_records"], r["gpu"]["late_records"], k("direct_kernel")["starved_launches"] >= 4990)')" \
    "({'driver': 5000, 'runtime': 0}, 5000, 0, 0, True)"

run drop FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_DROPPED=7 -- "$BIN/launcher" direct 10
expect "dropped records reported" "$(rq "$WORK/drop.json" 'r["totals"]["dropped_records"]')" 7
expect "dropped records: one line" "$(grep -c 'dropped' "$WORK/drop.err")" 1

run thr FAKE_CUPTI_KERNEL=threaded_kernel -- "$BIN/launcher" threads 1000
expect "8 threads: every kernel joined" \
    "$(rq "$WORK/thr.json" '(k("threaded_kernel")["sources"], k("threaded_kernel")["gpu_ns"]["count"])')" \
    "({'driver': 8000, 'runtime': 0}, 8000)"

# Trace: GPU spans joined with the launches by corr; starved intervals.
run tr FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 TRLAT_TRACE=5 -- "$BIN/launcher" direct 100
expect "trace: each kept launch has its GPU span" \
    "$(rq "$WORK/tr.json" '{e["corr"] for e in r["events"] if e["kind"] == "launch"} <= {e["corr"] for e in r["events"] if e["kind"] == "gpu"}')" True
# (The fake starts a kernel when the driver call is done, which may be before
# the call returned to trlat, as on a GPU.)
expect "trace: GPU span after its launch call entered the driver" \
    "$(rq "$WORK/tr.json" 'all(g["start_ns"] >= l["start_ns"] for l in r["events"] if l["kind"] == "launch" for g in r["events"] if g["kind"] == "gpu" and g["corr"] == l["corr"])')" True
expect "trace: starved intervals, device and stream" \
    "$(rq "$WORK/tr.json" 'sorted({e["scope"] for e in r["events"] if e["kind"] == "starved"})')" "['device', 'stream']"

# The launch callbacks join (whether the program made its CUDA context
# before trlat started does not matter to them: measured on the GPU, where
# tests/gpu/bench_launch.c does that). Tiny kernels and no launch latency:
# the GPU waits for every launch call. TRLAT_STACKS=1 takes the launch
# path's slow variant, which hands its entry time to CUPTI too.
for ctx in fast stacks; do
    n=j-$ctx
    run $n TRLAT_STACKS=$([ $ctx = stacks ] && echo 1 || echo 0) \
        FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 FAKE_CUPTI_RUNTIME=3 \
        -- "$BIN/launcher" direct 2000
    expect "$n: sources and GPU records" \
        "$(rq "$WORK/$n.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], k("_Z14runtime_kernelPf")["sources"], r["gpu"]["kernel_records"])')" \
        "({'driver': 2000, 'runtime': 0}, 2000, {'driver': 0, 'runtime': 3}, 2003)"
    expect "$n: every kernel joined, trlat's by its id, none lost" \
        "$(rq "$WORK/$n.json" '(r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"], r["gpu"]["lost_join_records"])')" "(0, 2000, 0)"
    expect "$n: starvation computed (tiny kernels: almost every launch)" \
        "$(rq "$WORK/$n.json" '(k("direct_kernel")["starved_launches"] >= 1990, k("_Z14runtime_kernelPf")["starved_launches"] >= 2)')" \
        "(True, True)"
    expect "$n: nothing on stderr" "$(cat "$WORK/$n.err")" ""
done

# A CUDA runtime in the program (as PyTorch's): its launches call the driver
# through trlat's cuGetProcAddress wrapper (counted once, as trlat's own
# launch), or internally (seen only through CUPTI); trlat's own driver
# launches of the same kernel besides.
cat >"$WORK/runtime.py" <<'PY'
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
f = ctypes.c_void_p()
cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"direct_kernel")  # trlat starts
rt = ctypes.CDLL(os.environ["TRLAT_CUPTI_LIB"])  # the fake libcupti's fake runtime
n = int(sys.argv[1])
for i in range(n):
    assert cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None) == 0
    assert rt.fake_cudaLaunchKernel(b"torch_kernel", 1) == 0   # through trlat's wrapper
    assert rt.fake_cudaLaunchKernel(b"hidden_kernel", 0) == 0  # trlat does not see it
    if i % 2:
        assert rt.fake_cudaLaunchKernel(b"direct_kernel", 0) == 0  # nor this one
PY
for ctx in 0 1; do # TRLAT_STACKS=1: the launch path's slow variant
    n=rt$ctx
    run $n TRLAT_STACKS=$ctx FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 \
        TRLAT_TRACE=30 -- python3 "$WORK/runtime.py" 400
    expect "runtime (stacks=$ctx): runs" "$(cat "$WORK/$n.err")" ""
    expect "runtime (stacks=$ctx): launches through trlat's wrapper counted once" \
        "$(rq "$WORK/$n.json" '(k("torch_kernel")["launches"], k("torch_kernel")["sources"], k("torch_kernel")["gpu_ns"]["count"])')" \
        "(400, {'driver': 400, 'runtime': 0}, 400)"
    expect "runtime (stacks=$ctx): launches trlat did not see, as runtime, with starvation" \
        "$(rq "$WORK/$n.json" '(k("hidden_kernel")["launches"], k("hidden_kernel")["sources"], k("hidden_kernel")["gpu_ns"]["count"], k("hidden_kernel")["starved_launches"] >= 390)')" \
        "(400, {'driver': 0, 'runtime': 400}, 400, True)"
    expect "runtime (stacks=$ctx): a kernel trlat launched, also launched where trlat did not see it" \
        "$(rq "$WORK/$n.json" '(k("direct_kernel")["launches"], k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"])')" \
        "(600, {'driver': 400, 'runtime': 200}, 600)"
    expect "runtime (stacks=$ctx): gpu section" \
        "$(rq "$WORK/$n.json" '[r["gpu"][x] for x in ("kernel_records", "joined_by_trlat_id", "unjoined_records", "lost_join_records")]')" \
        "[1400, 800, 0, 0]"
    # (30 launch events, the last 30 kernels: the last 10 launches' kernels are among them)
    expect "runtime (stacks=$ctx): trace: trlat's launches and their kernels share corr, the others have none" \
        "$(rq "$WORK/$n.json" '(lambda L, G, D: len(L) == 30 and all(c > 0 for c in L) and set(L[-10:]) <= D and {c for c in D if c >= min(L)} <= set(L) and all(e["corr"] is None for e in G if e["kernel"] == "hidden_kernel"))([e["corr"] for e in r["events"] if e["kind"] == "launch"], [e for e in r["events"] if e["kind"] == "gpu"], {e["corr"] for e in r["events"] if e["kind"] == "gpu" and e["source"] == "driver"})')" True
done

# No callback ever arrives (a CUPTI that fails the join): GPU times kept,
# nothing joined, and trlat says so once.
run nocb FAKE_CUPTI_NO_CALLBACKS=1 FAKE_CUPTI_KERNEL=direct_kernel -- "$BIN/launcher" direct 300
expect "no callbacks: GPU times, nothing joined, host counts unchanged" \
    "$(rq "$WORK/nocb.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"], r["gpu"]["starved_launches"])')" \
    "({'driver': 300, 'runtime': 0}, 300, 300, 0, 0)"
expect "no callbacks: the self-check says so, once" \
    "$(grep -c 'CUPTI delivered 300 kernel records but no launch callback joined them' "$WORK/nocb.err"):$(wc -l <"$WORK/nocb.err")" \
    "1:1"

# Threads, trace ids, a slow CUPTI thread; the context made first.
run cthr FAKE_CUPTI_KERNEL=threaded_kernel -- "$BIN/launcher" threads 1000
expect "8 threads: every kernel joined" \
    "$(rq "$WORK/cthr.json" '(k("threaded_kernel")["sources"], k("threaded_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" \
    "({'driver': 8000, 'runtime': 0}, 8000, 8000)"
run ctr FAKE_CUPTI_KERNEL=direct_kernel TRLAT_TRACE=5 -- "$BIN/launcher" direct 100
expect "trace: each kept launch has its GPU span, by corr" \
    "$(rq "$WORK/ctr.json" '(lambda L, G: len(L) == 5 and all(c > 0 for c in L) and set(L) <= G)([e["corr"] for e in r["events"] if e["kind"] == "launch"], {e["corr"] for e in r["events"] if e["kind"] == "gpu"})')" True
expect "trace: a launch's corr is its driver entry time" \
    "$(rq "$WORK/ctr.json" 'all(e["corr"] == e["start_ns"] for e in r["events"] if e["kind"] == "launch")')" True
# Buffers handed back only at exit: a thread's ring (16384 launches) fills up.
run chold FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_HOLD=1 -- "$BIN/launcher" direct 20000
expect "ring full: the newest are lost, counted, unjoined; host counts unchanged" \
    "$(rq "$WORK/chold.json" '(r["gpu"]["lost_join_records"], r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"], k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"])')" \
    "(3616, 3616, 16384, {'driver': 20000, 'runtime': 0}, 20000)"

# Clean ends.
run idle -- "$BIN/launcher" direct 0; rc=$?
expect "never launched: exits 0, no report" "$rc:$(ls "$WORK"/idle.json 2>/dev/null | wc -l)" "0:0"
FAKE_CUPTI_KERNEL=parent_kernel TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" fork 20 >"$WORK/f.out" 2>&1; rc=$?
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/f.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/f.out")
expect "fork: exits 0" "$rc" 0
expect "fork: parent keeps its GPU records, joined" \
    "$(rq "$WORK/fork-$ppid.json" '(r["config"]["cupti"], k("parent_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" "('on', 20, 20)"
expect "fork: child is host-only, without the parent's records" \
    "$(rq "$WORK/fork-$cpid.json" '(r["config"]["cupti"], "fork" in r["config"]["cupti_reason"], k("parent_kernel"), k("child_kernel")["launches"], r["totals"]["gpu_ns"])')" \
    "('unavailable', True, None, 40, None)"
run xt FAKE_CUPTI_KERNEL=exit_thread_kernel -- "$BIN/launcher" exit_thread 30; rc=$?
expect "exit from a thread: flushed, reported, joined" \
    "$rc:$(rq "$WORK/xt.json" '(k("exit_thread_kernel")["launches"], k("exit_thread_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" "0:(30, 30, 30)"
