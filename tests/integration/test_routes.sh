#!/usr/bin/env bash
# Every route to the driver is seen, counted and named exactly.
. "$(dirname "$0")/lib.sh"

run_mode() { # MODE N -> report path in $R, launcher stdout in $OUTF
    rm -f "$WORK"/r-*.json
    OUTF=$WORK/$1.out
    TRLAT_OUTPUT="$WORK/r-%p.json" LD_PRELOAD=$LIB "$BIN/launcher" "$1" "$2" >"$OUTF" 2>"$WORK/$1.err"
    R=$(report_of "$WORK/r-*.json")
}

run_mode direct 1000
expect "direct: launches counted" "$(rq "$R" 'k("direct_kernel")["launches"]')" 1000
expect "direct: driver saw the same" "$(grep -c 'driver cuLaunchKernel 1000' "$OUTF")" 1
expect "direct: driver_ns stats count" "$(rq "$R" 'k("direct_kernel")["driver_ns"]["count"]')" 1000
expect "direct: gap count is launches-1" "$(rq "$R" 'k("direct_kernel")["gap_ns"]["count"]')" 999
expect "direct: hist sums to count" "$(rq "$R" 'sum(c for _, c in k("direct_kernel")["driver_ns"]["hist"])')" 1000
expect "direct: sources" "$(rq "$R" 'k("direct_kernel")["sources"]')" "{'driver': 1000, 'runtime': 0}"
expect "direct: schema" "$(rq "$R" 'r["schema"]')" "trlat-report/1"
expect "direct: totals" "$(rq "$R" '(r["totals"]["launches"], r["totals"]["kernels"])')" "(1000, 1)"
expect "direct: cupti off in config" "$(rq "$R" 'r["config"]["cupti"]')" "off"

run_mode direct_ex 500
expect "direct cuLaunchKernelEx" "$(rq "$R" 'k("direct_ex_kernel")["launches"]')" 500

run_mode dlsym 300
expect "dlsym cuLaunchKernelEx (Triton's route)" "$(rq "$R" 'k("dlsym_ex_kernel")["launches"]')" 300
expect "dlsym cuLaunchKernel (ctypes' route)" "$(rq "$R" 'k("dlsym_kernel")["launches"]')" 300
expect "dlsym: driver saw them" "$(grep -c 'driver cuLaunchKernelEx 300' "$OUTF")" 1
expect "dlsym: other names answered by glibc" "$(grep -c 'dlsym(nonexistent) = (nil)' "$OUTF")" 1
expect "dlsym: dlerror set for a missing name" "$(grep -c 'dlerror set: 1' "$OUTF")" 1

run_mode procaddr 200
expect "cuGetProcAddress_v2 legacy: cuLaunchKernel" "$(rq "$R" 'k("procaddr_kernel")["launches"]')" 200
expect "cuGetProcAddress_v2 legacy: cuLaunchKernelEx" "$(rq "$R" 'k("procaddr_ex_kernel")["launches"]')" 200
expect "legacy goes to legacy entry" "$(grep -c 'driver cuLaunchKernel 200' "$OUTF")" 1
expect "missing symbol passes through" "$(grep -c 'missing symbol: rc=500 status=1 ptr=(nil)' "$OUTF")" 1

run_mode procaddr_ptds 150
expect "cuGetProcAddress per-thread: counted" "$(rq "$R" 'k("procaddr_kernel")["launches"]')" 150
expect "per-thread goes to _ptsz entry" "$(grep -c 'driver cuLaunchKernel_ptsz 150' "$OUTF")" 1
expect "per-thread Ex goes to _ptsz entry" "$(grep -c 'driver cuLaunchKernelEx_ptsz 150' "$OUTF")" 1

run_mode procaddr_v1 120
expect "cuGetProcAddress (v1 ABI)" "$(rq "$R" 'k("procaddr_kernel")["launches"]')" 120

FAKE_CUDA_PROC_ALIAS=1 run_mode procaddr 110
expect "driver alias pointer gets its own wrapper" "$(rq "$R" 'k("procaddr_kernel")["launches"]')" 110
expect "alias wrapper forwards to the alias" "$(grep -c 'driver alias_cuLaunchKernel 110' "$OUTF")" 1

run_mode library 50
expect "cuLibraryGetKernel+cuKernelGetFunction named" "$(rq "$R" 'k("library_kernel")["launches"]')" 100

run_mode unnamed 40
expect "unseen handle named through cuFuncGetName" "$(rq "$R" 'k("never_looked_up_kernel")["launches"]')" 40

run_mode cooperative 30
expect "cuLaunchCooperativeKernel" "$(rq "$R" 'k("coop_kernel")["launches"]')" 30

run_mode invalid 5
expect "invalid handle: error code unchanged" "$(grep -c '^rc=400' "$OUTF")" 1
expect "invalid handle: counted as errors" "$(rq "$R" 'r["kernels"][0]["errors"]')" 5
expect "invalid handle: listed as unknown" "$(rq "$R" 'r["kernels"][0]["name"].startswith("<unknown")')" True
