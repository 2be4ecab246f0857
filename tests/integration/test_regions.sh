#!/usr/bin/env bash
# Regions: trlat.region from Python (nested, per thread, as a decorator)
# and NVTX ranges through NVTX's tool injection (a C program built with
# NVTX v3's own loader), grouped in the report, its text view and merge.
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/pyhook/prog.py
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
regions() { rq "$1" 'sorted((g["name"], g["launches"]) for g in r.get("regions", []))'; }

# NVTX, preloaded by hand with the variable set
NVTX_INJECTION64_PATH=$LIB TRLAT_OUTPUT="$WORK/nv.json" LD_PRELOAD=$LIB "$BIN/nvtxprog" >"$WORK/nv.out" 2>"$WORK/nv.err"
expect "nvtx: exit 0" "$?" 0
expect "nvtx: ranges pushed and popped as regions, nested, exact counts" "$(regions "$WORK/nv.json")" \
    "[('inner', 3), ('outer', 6), ('pushed_ex', 4)]"
expect "nvtx: all 21 launches counted" "$(rq "$WORK/nv.json" 'r["totals"]["launches"]')" 21
expect "nvtx: push and pop return the nesting depth" "$(cat "$WORK/nv.out")" "depths 1 2 0"
expect "nvtx: a region's times are its launches'" \
    "$(rq "$WORK/nv.json" '[g for g in r["regions"] if g["name"] == "inner"][0]["driver_ns"] > 0')" True
# without the variable NVTX finds no tool: no regions, the same launches
TRLAT_OUTPUT="$WORK/nv0.json" LD_PRELOAD=$LIB "$BIN/nvtxprog" >/dev/null 2>&1
expect "nvtx: no injection variable: no regions" "$(rq "$WORK/nv0.json" '("regions" in r, r["totals"]["launches"])')" "(False, 21)"
# trlat run sets it, and keeps a tool's own
(cd "$WORK" && "$B/trlat" run -o "$WORK/nvrun.json" -- "$BIN/nvtxprog" >/dev/null 2>&1)
expect "nvtx: trlat run points NVTX at trlat" "$(regions "$WORK/nvrun.json")" "[('inner', 3), ('outer', 6), ('pushed_ex', 4)]"
(cd "$WORK" && NVTX_INJECTION64_PATH=/nonexistent/libtool.so "$B/trlat" run -o "$WORK/nvkeep.json" -- "$BIN/nvtxprog" >"$WORK/nvkeep.out" 2>&1)
expect "nvtx: trlat run keeps another tool's NVTX_INJECTION64_PATH" "$(rq "$WORK/nvkeep.json" '"regions" in r')" False

# trlat.region from Python, against the stand-in Triton
TRLAT_OUTPUT="$WORK/py.json" LD_PRELOAD=$LIB "$PY" "$PROG" regions >"$WORK/py.out" 2>"$WORK/py.err"
expect "python: exit 0, nothing on stderr" "$?:$(cat "$WORK/py.err")" "0:"
expect "python: regions nested, per thread, decorator; exact counts" "$(regions "$WORK/py.json")" \
    "[('inner', 3), ('step', 11), ('warmup', 5), ('worker', 4)]"
expect "python: the launches' py->drv is in their region" \
    "$(rq "$WORK/py.json" 'all(g["py_to_driver_ns"] > 0 for g in r["regions"])')" True
"$B/trlat" report "$WORK/py.json" >"$WORK/py.txt"
expect "python: trlat report shows the regions, most host time first" \
    "$(sed -n '/^regions (host time, most first)/,/^$/p' "$WORK/py.txt" | awk 'NR > 2 && NF {print $1, $NF}' | tr '\n' ' ')" \
    "$(rq "$WORK/py.json" '" ".join("%d %s" % (g["launches"], g["name"]) for g in sorted(r["regions"], key=lambda g: (-(g["py_to_driver_ns"] + g["driver_ns"]), g["name"]))) + " "')"
"$B/trlat" merge "$WORK/py.json" "$WORK/py.json" -o "$WORK/merged.json" 2>/dev/null
expect "merge: regions summed by name" "$(regions "$WORK/merged.json")" \
    "[('inner', 6), ('step', 22), ('warmup', 10), ('worker', 8)]"
# disabled: the API says so instead of grouping nothing
out=$(TRLAT_DISABLE=1 LD_PRELOAD=$LIB "$PY" -c 'import sys; sys.path.insert(0, "'"$ROOT"'/python"); import trlat
try:
    with trlat.region("x"): pass
except trlat.NotLoaded as e: print("NotLoaded")' 2>&1)
expect "python: trlat disabled: region raises NotLoaded" "$out" NotLoaded
out=$("$PY" -c 'import sys; sys.path.insert(0, "'"$ROOT"'/python"); import trlat
try:
    with trlat.region("x"): pass
except trlat.NotLoaded as e: print(str(e)[:27])' 2>&1)
expect "python: without trlat: region says how to start it" "$out" "trlat is not loaded in this"
