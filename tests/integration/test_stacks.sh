#!/usr/bin/env bash
# TRLAT_STACKS=1: launches made outside a hooked Python call get their native
# call site, lib!symbol+0xoff.
. "$(dirname "$0")/lib.sh"
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')

stk() { # NAME MODE N: launcher under TRLAT_STACKS=1
    TRLAT_STACKS=1 TRLAT_OUTPUT="$WORK/$1.json" LD_PRELOAD=$LIB "$BIN/launcher" "$2" "$3" >"$WORK/$1.out" 2>&1
}
sites() { rq "$WORK/$1.json" 'sorted((s["site"], s["kind"], s["launches"]) for s in k("'"$2"'")["call_sites"])'; }

stk direct direct 300
expect "C caller named from its symbol table" "$(sites direct direct_kernel | sed 's/+0x[0-9a-f]*/+OFF/')" "[('launcher!loop_lk+OFF', 'native', 300)]"
expect "config says stacks" "$(rq "$WORK/direct.json" 'r["config"]["stacks"]')" True

stk dl dlsym 200
expect "through dlsym: Ex caller" "$(sites dl dlsym_ex_kernel | sed 's/+0x[0-9a-f]*/+OFF/')" "[('launcher!loop_lkex+OFF', 'native', 200)]"
expect "through dlsym: legacy caller" "$(sites dl dlsym_kernel | sed 's/+0x[0-9a-f]*/+OFF/')" "[('launcher!loop_lk+OFF', 'native', 200)]"

stk thr threads 20000
expect "8 threads: one site, every launch" "$(sites thr threaded_kernel | sed 's/+0x[0-9a-f]*/+OFF/')" "[('launcher!loop_lk+OFF', 'native', 160000)]"

TRLAT_OUTPUT="$WORK/off.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 10 >/dev/null 2>&1
expect "without TRLAT_STACKS: no native sites" "$(rq "$WORK/off.json" 'k("direct_kernel")["call_sites"]')" "[]"

# C++ exceptions still unwind with trlat's (hidden, static) libunwind inside.
TRLAT_STACKS=1 TRLAT_OUTPUT="$WORK/cxx.json" LD_PRELOAD=$LIB "$BIN/cxx_throw" >"$WORK/c.out" 2>&1; rc=$?
expect "C++ throw/catch with TRLAT_STACKS=1" "$rc:$(cat "$WORK/c.out")" "0:caught 1000"
expect "C++ caller" "$(sites cxx 'cxx_kernel(float*, int)' | sed 's/+0x[0-9a-f]*/+OFF/')" "[('cxx_throw!main+OFF', 'native', 1000)]"

# ctypes: the native caller is libffi (its internal symbol is not exported).
TRLAT_STACKS=1 TRLAT_OUTPUT="$WORK/ct.json" LD_PRELOAD=$LIB "$PY" -c "
import ctypes
c = ctypes.CDLL('libcuda.so.1'); f = ctypes.c_void_p()
c.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b'ctypes_kernel')
for i in range(50): c.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None)" >/dev/null 2>&1
expect "ctypes: one native site in libffi" "$(rq "$WORK/ct.json" '[(s["site"].startswith("libffi"), s["launches"]) for s in k("ctypes_kernel")["call_sites"]]')" "[(True, 50)]"

# Hooked Triton calls keep their Python site with TRLAT_STACKS=1.
TRLAT_STACKS=1 TRLAT_OUTPUT="$WORK/py.json" LD_PRELOAD=$LIB "$PY" "$ROOT/tests/pyhook/prog.py" loop 30 >"$WORK/py.out" 2>&1
expect "Triton calls: python sites" "$(rq "$WORK/py.json" '[(s["kind"], s["launches"]) for s in k("add_kernel")["call_sites"]]')" "[('python', 30)]"
