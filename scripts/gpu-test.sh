#!/usr/bin/env bash
# The GPU test suite and benchmarks, for the GPU machine (CI has no GPU).
#   scripts/gpu-test.sh [SUITE...]     (make gpu-test)
# SUITE is a file under tests/gpu/ (test_*.py, bench_*.py, bench_*.sh);
# default: all of them. Uses the carried build/ when present, else builds
# (without libunwind, which that machine lacks; the library profile-guided,
# scripts/pgo-build.sh, as carried builds are). Full logs and the reports go
# under $OUT (default ./gpu-out); a short table is printed last. Exits 1 when
# a suite is missing, fails a check or a target, or exits non-zero.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export BUILD=${BUILD:-$PWD/build}
export TRLAT_GPU_REPORTS=$OUT/.reports
export PYTHONUNBUFFERED=1
LOG=$OUT/gpu-test.log
: >"$LOG"

if [ ! -f "$BUILD/libtrlat.so" ] || [ ! -x "$BUILD/tests/gpu/bench_launch" ]; then
    echo "== building (no carried build found)" | tee -a "$LOG"
    LTO=$(make -s lto-flags 2>>"$LOG") # probed once: this machine's gcc may not link with -flto
    export LTO
    [ -n "$LTO" ] || echo "== without link-time optimization (cc cannot link with -flto here)" | tee -a "$LOG"
    make -s TRLAT_NO_UNWIND=1 "$BUILD/libtrlat.so" "$BUILD/tests/gpu/bench_launch" "$BUILD/tests/gpu/librawloop.so" >>"$LOG" 2>&1 || {
        echo "build failed; see $LOG"; exit 1; }
    # the fast path's numbers are the profile-guided library's (make pgo)
    TRLAT_NO_UNWIND=1 PGO_PYTHON=python3 bash scripts/pgo-build.sh >>"$LOG" 2>&1 ||
        echo "== make pgo failed (see $LOG): measuring the plain build" | tee -a "$LOG"
fi

{
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1
    python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1
} | tee -a "$LOG"

# carried wheels (scripts/fetch-wheels.sh): installed under a site-packages
# path, so that trlat counts their files as a library's, not the program's
if ls .whl/*.whl >/dev/null 2>&1; then
    SITE=${TMPDIR:-/tmp}/trlat-gpu-site/site-packages
    if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl >>"$LOG" 2>&1; then
        export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
        echo "== wheels: $(cd .whl && ls *.whl | tr '\n' ' ')" | tee -a "$LOG"
    else
        echo "== the wheels in .whl did not install (see $LOG)" | tee -a "$LOG"
    fi
fi

# FlagGems' tuned configs and generated code, carried from an earlier run
# (.fgcache, ignored by git): a decode's lengths are tuned once, not in
# every run; the copy under $OUT/fgcache.tgz carries this run's back
if [ -d .fgcache ] && [ -z "${FLAGGEMS_CACHE_DIR:-}" ]; then
    export FLAGGEMS_CACHE_DIR=${TMPDIR:-/tmp}/trlat-gpu-fgcache
    mkdir -p "$FLAGGEMS_CACHE_DIR" && cp -r .fgcache/. "$FLAGGEMS_CACHE_DIR/"
    trap '[ -n "${OUT:-}" ] && tar czf "$OUT/fgcache.tgz" -C "$FLAGGEMS_CACHE_DIR" . 2>/dev/null' EXIT
fi

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
    for f in tests/gpu/test_*.py tests/gpu/bench_*.py tests/gpu/bench_*.sh; do
        [ -f "$f" ] && suites+=("$(basename "$f")")
    done
fi

declare -A verdict
status=0 # 1 when a suite is missing, fails a check, misses a target or exits non-zero
for s in "${suites[@]}"; do
    f=tests/gpu/$s
    [ -f "$f" ] || { verdict[$s]="missing"; status=1; continue; }
    echo "== $s" | tee -a "$LOG"
    start=$(date +%s)
    case "$f" in
        *.py) python3 "$f" >"$OUT/.cur" 2>&1 ;;
        *.sh) bash "$f" >"$OUT/.cur" 2>&1 ;;
    esac
    rc=$?
    cat "$OUT/.cur" >>"$LOG"
    grep -E '^(PASS|FAIL|TABLE)' "$OUT/.cur"
    p=$(grep -c '^PASS' "$OUT/.cur"); fl=$(grep -c '^FAIL' "$OUT/.cur")
    # a benchmark's verdicts are its TABLE lines ending in PASS or FAIL
    tp=$(grep -c '^TABLE .* PASS$' "$OUT/.cur"); tf=$(grep -c '^TABLE .* FAIL$' "$OUT/.cur")
    v="$p passed, $fl failed"
    [ $((tp + tf)) -eq 0 ] || v="$v, targets: $tp met, $tf missed"
    verdict[$s]="$v, exit $rc, $(( $(date +%s) - start ))s"
    [ "$rc" -eq 0 ] && [ "$fl" -eq 0 ] && [ "$tf" -eq 0 ] || status=1
done
rm -f "$OUT/.cur"
if [ -d "$OUT/.reports" ]; then
    tar -C "$OUT/.reports" -czf "$OUT/reports.tgz" . && rm -rf "$OUT/.reports"
fi

{
    echo
    echo "== summary (full log: $LOG)"
    grep -h '^TABLE' "$LOG" | sed 's/^TABLE /  /'
    for s in "${suites[@]}"; do printf '  %-28s %s\n' "$s" "${verdict[$s]}"; done
} | tee "$OUT/summary.txt"
exit $status
