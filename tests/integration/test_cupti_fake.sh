#!/usr/bin/env bash
# The CUPTI-on path without a GPU: the fake libcupti (tests/fake/fake_cupti.c)
# sees every launch of the fake driver and gives it a kernel record, API and
# external correlation records or callbacks as the real one would, and adds
# runtime launches on request. Checks the join (both TRLAT_CUPTI_JOIN ways,
# with the CUDA context made after or before trlat started), GPU time,
# starvation, runtime kernels, buffers handed back in any order, dropped
# records, threads, fork, exit.
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
expect "queued launches: (almost) never starved" "$(rq "$WORK/d.json" 'k("direct_kernel")["starved_launches"] <= 1')" True
expect "gpu section: nothing lost, all joined by trlat's id" \
    "$(rq "$WORK/d.json" '[r["gpu"][x] for x in ("kernel_records", "unjoined_records", "late_records", "dropped_records", "joined_by_trlat_id")]')" \
    "[3000, 0, 0, 0, 3000]"
expect "no stderr" "$(cat "$WORK/d.err")" ""

# Without external correlation records, trlat's launches still count once.
run noext FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_NO_EXT=1 FAKE_CUPTI_RUNTIME=3 -- "$BIN/launcher" direct 500
expect "no external ids: driver launches not counted twice" \
    "$(rq "$WORK/noext.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], k("_Z14runtime_kernelPf")["sources"], r["gpu"]["joined_by_trlat_id"])')" \
    "({'driver': 500, 'runtime': 0}, 500, {'driver': 0, 'runtime': 3}, 0)"

# Tiny kernels and no launch latency: the GPU waits for every launch call.
run tiny FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 -- "$BIN/launcher" direct 2000
expect "tiny kernels: starved on (almost) every launch" \
    "$(rq "$WORK/tiny.json" 'k("direct_kernel")["starved_launches"] >= 1990')" True
expect "tiny kernels: totals.starved_ns is the kernels' sum" \
    "$(rq "$WORK/tiny.json" 'r["totals"]["starved_ns"] == sum(x["starved_ns"] for x in r["kernels"]) > 0')" True
# Long kernels: launches queue up, the GPU never waits for the host.
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

# Kernel records handed back before the launch records that go with them.
run split FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_SPLIT=1 FAKE_CUPTI_PER_BUFFER=500 -- "$BIN/launcher" direct 5000
expect "records out of order across buffers: all joined" \
    "$(rq "$WORK/split.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], r["gpu"]["unjoined_records"])')" \
    "({'driver': 5000, 'runtime': 0}, 5000, 0)"

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

# The join, both ways (TRLAT_CUPTI_JOIN=records, the default, or callback),
# with the program's CUDA context made after trlat started (as in PyTorch,
# where trlat starts inside the runtime's first cuGetProcAddress) or before
# it (FAKE_CUDA_CONTEXT_FIRST=1, as tests/gpu/bench_launch.c does): CUPTI
# then writes no launch API records, and no external correlation records.
# Tiny kernels and no launch latency: the GPU waits for every launch call.
for join in records callback; do
    for ctx in after first; do
        n=j-$join-$ctx
        run $n TRLAT_CUPTI_JOIN=$join FAKE_CUDA_CONTEXT_FIRST=$([ $ctx = first ] && echo 1 || echo 0) \
            FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_KERNEL_NS=20 FAKE_CUPTI_LATENCY_NS=0 FAKE_CUPTI_RUNTIME=3 \
            -- "$BIN/launcher" direct 2000
        expect "$join join, context $ctx trlat: sources and GPU records" \
            "$(rq "$WORK/$n.json" '(k("direct_kernel")["sources"], k("direct_kernel")["gpu_ns"]["count"], k("_Z14runtime_kernelPf")["sources"], r["gpu"]["kernel_records"])')" \
            "({'driver': 2000, 'runtime': 0}, 2000, {'driver': 0, 'runtime': 3}, 2003)"
        expect "$join join, context $ctx trlat: gpu.join and lost_join_records only with callbacks" \
            "$(rq "$WORK/$n.json" '(r["gpu"].get("join"), r["gpu"].get("lost_join_records"))')" \
            "$([ $join = callback ] && echo "('callback', 0)" || echo "(None, None)")"
    done
done
for n in j-records-after j-callback-after j-callback-first; do
    expect "$n: every kernel joined, trlat's by its id" \
        "$(rq "$WORK/$n.json" '(r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"])')" "(0, 2000)"
    expect "$n: starvation computed (tiny kernels: almost every launch)" \
        "$(rq "$WORK/$n.json" '(k("direct_kernel")["starved_launches"] >= 1990, k("_Z14runtime_kernelPf")["starved_launches"] >= 2)')" \
        "(True, True)"
    expect "$n: nothing on stderr" "$(cat "$WORK/$n.err")" ""
done
# The known limit of the records join: nothing joins, starvation is not
# computed, and trlat says so once.
expect "records join, context first: nothing joined, no starvation (known limit)" \
    "$(rq "$WORK/j-records-first.json" '(r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"], r["gpu"]["starved_launches"])')" \
    "(2003, 0, 0)"
expect "records join, context first: the self-check says so, once" \
    "$(grep -c 'CUPTI delivered 2003 kernel records but no launch records (did the program create its CUDA context before trlat started? try TRLAT_CUPTI_JOIN=callback)' "$WORK/j-records-first.err"):$(wc -l <"$WORK/j-records-first.err")" \
    "1:1"

# Callbacks: 8 threads, buffers out of order, trace ids, a slow CUPTI thread.
export TRLAT_CUPTI_JOIN=callback
run cthr FAKE_CUDA_CONTEXT_FIRST=1 FAKE_CUPTI_KERNEL=threaded_kernel -- "$BIN/launcher" threads 1000
expect "callbacks, 8 threads: every kernel joined" \
    "$(rq "$WORK/cthr.json" '(k("threaded_kernel")["sources"], k("threaded_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" \
    "({'driver': 8000, 'runtime': 0}, 8000, 8000)"
run csplit FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_SPLIT=1 FAKE_CUPTI_PER_BUFFER=500 -- "$BIN/launcher" direct 5000
expect "callbacks, records out of order across buffers: all joined" \
    "$(rq "$WORK/csplit.json" '(k("direct_kernel")["gpu_ns"]["count"], r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"])')" \
    "(5000, 0, 5000)"
run ctr FAKE_CUDA_CONTEXT_FIRST=1 FAKE_CUPTI_KERNEL=direct_kernel TRLAT_TRACE=5 -- "$BIN/launcher" direct 100
expect "callbacks, trace: each kept launch has its GPU span, by corr" \
    "$(rq "$WORK/ctr.json" '(lambda L, G: len(L) == 5 and all(c > 0 for c in L) and set(L) <= G)([e["corr"] for e in r["events"] if e["kind"] == "launch"], {e["corr"] for e in r["events"] if e["kind"] == "gpu"})')" True
# Buffers handed back only at exit: a thread's ring (16384 launches) fills up.
run chold FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_HOLD=1 -- "$BIN/launcher" direct 20000
expect "callbacks, ring full: the newest are lost, counted, unjoined" \
    "$(rq "$WORK/chold.json" '(r["gpu"]["lost_join_records"], r["gpu"]["unjoined_records"], r["gpu"]["joined_by_trlat_id"], k("direct_kernel")["sources"])')" \
    "(3616, 3616, 16384, {'driver': 20000, 'runtime': 0})"
run rhold TRLAT_CUPTI_JOIN=records FAKE_CUPTI_KERNEL=direct_kernel FAKE_CUPTI_HOLD=1 -- "$BIN/launcher" direct 20000
expect "records join, same run: all joined" "$(rq "$WORK/rhold.json" '(r["gpu"]["unjoined_records"], r["gpu"].get("lost_join_records"))')" "(0, None)"
FAKE_CUPTI_KERNEL=parent_kernel TRLAT_OUTPUT="$WORK/cfork-%p.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" fork 20 >"$WORK/cf.out" 2>&1; rc=$?
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/cf.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/cf.out")
expect "callbacks, fork: parent joined, child host-only" \
    "$rc:$(rq "$WORK/cfork-$ppid.json" '(k("parent_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])'):$(rq "$WORK/cfork-$cpid.json" '(r["config"]["cupti"], k("child_kernel")["launches"])')" \
    "0:(20, 20):('unavailable', 40)"
run cxt FAKE_CUPTI_KERNEL=exit_thread_kernel -- "$BIN/launcher" exit_thread 30; rc=$?
expect "callbacks, exit from a thread: flushed, joined" \
    "$rc:$(rq "$WORK/cxt.json" '(k("exit_thread_kernel")["gpu_ns"]["count"], r["gpu"]["joined_by_trlat_id"])')" "0:(30, 30)"
unset TRLAT_CUPTI_JOIN

# Clean ends.
run idle -- "$BIN/launcher" direct 0; rc=$?
expect "never launched: exits 0, no report" "$rc:$(ls "$WORK"/idle.json 2>/dev/null | wc -l)" "0:0"
FAKE_CUPTI_KERNEL=parent_kernel TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" fork 20 >"$WORK/f.out" 2>&1; rc=$?
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/f.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/f.out")
expect "fork: exits 0" "$rc" 0
expect "fork: parent keeps its GPU records" \
    "$(rq "$WORK/fork-$ppid.json" '(r["config"]["cupti"], k("parent_kernel")["gpu_ns"]["count"])')" "('on', 20)"
expect "fork: child is host-only, without the parent's records" \
    "$(rq "$WORK/fork-$cpid.json" '(r["config"]["cupti"], "fork" in r["config"]["cupti_reason"], k("parent_kernel"), k("child_kernel")["launches"], r["totals"]["gpu_ns"])')" \
    "('unavailable', True, None, 40, None)"
run xt FAKE_CUPTI_KERNEL=exit_thread_kernel -- "$BIN/launcher" exit_thread 30; rc=$?
expect "exit from a thread: flushed and reported" \
    "$rc:$(rq "$WORK/xt.json" '(k("exit_thread_kernel")["launches"], k("exit_thread_kernel")["gpu_ns"]["count"])')" "0:(30, 30)"
