#!/usr/bin/env bash
# CUPTI's cost per launch, and trlat's cost beyond it, on the raw C loop of
# cuLaunchKernelEx (GPU machine). One run, the variants interleaved (their
# order rotates every round):
#   raw        bench_launch N
#   cupti      LD_PRELOAD=libcupti_min.so bench_launch N   (CONCURRENT_KERNEL only)
#   trlat      LD_PRELOAD=libtrlat.so TRLAT_CUPTI=1 bench_launch N
#   trlat_off  LD_PRELOAD=libtrlat.so TRLAT_CUPTI=0 bench_launch N (the interposer alone)
# Both CUPTI clients load the same libcupti (TRLAT_CUPTI_LIB).
#
#   tests/gpu/bench_cupti.sh [BENCH_LAUNCH [N [ROUNDS]]]    defaults: build/tests/gpu/bench_launch 200000 7
#
# Prints each round, then the medians, a TABLE line, and
#   PASS/FAIL trlat with CUPTI adds <= 300 ns beyond CUPTI itself
#   PASS/FAIL trlat's report joined every launch with its GPU record
# CUPTI's own cost (cupti - raw) is printed for comparison with FACTS.md (~1.6 us).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-$PWD/build}
BENCH=${1:-$BUILD/tests/gpu/bench_launch}
N=${2:-200000}
ROUNDS=${3:-7}
LIB=${TRLAT_LIB:-$BUILD/libtrlat.so}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

MIN=$BUILD/tests/gpu/libcupti_min.so
if [ ! -f "$MIN" ]; then
    MIN=$TMP/libcupti_min.so
    gcc -std=c11 -D_GNU_SOURCE -O2 -fPIC -shared -I"$CUDA_HOME/include" -o "$MIN" tests/gpu/cupti_min.c -ldl -lpthread ||
        { echo "FAIL build tests/gpu/cupti_min.c"; exit 1; }
fi
if [ -z "${TRLAT_CUPTI_LIB:-}" ]; then
    for c in "$CUDA_HOME/lib64/libcupti.so.13" "$CUDA_HOME/targets/x86_64-linux/lib/libcupti.so.13" \
             /usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13; do
        [ -f "$c" ] && { TRLAT_CUPTI_LIB=$c; break; }
    done
fi
export TRLAT_CUPTI_LIB=${TRLAT_CUPTI_LIB:-}
echo "bench: $BENCH N=$N rounds=$ROUNDS libcupti=${TRLAT_CUPTI_LIB:-(loader search)}"
[ -x "$BENCH" ] || { echo "FAIL no $BENCH (make build/tests/gpu/bench_launch)"; exit 1; }

one() { # one VARIANT -> ns per launch on stdout
    local out
    case $1 in
        raw) out=$("$BENCH" "$N" 2>"$TMP/err") ;;
        cupti) out=$(LD_PRELOAD=$MIN "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat) out=$(TRLAT_CUPTI=1 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/r.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat_off) out=$(TRLAT_CUPTI=0 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/off.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
    esac
    local v=${out#ns_per_launch=}
    if [ "$v" = "$out" ] || [ -z "$v" ]; then
        echo "FAIL $1 run: $out $(tail -3 "$TMP/err")" >&2
        echo nan
    else
        echo "$v"
    fi
}

variants=(raw cupti trlat trlat_off)
declare -A all
for v in "${variants[@]}"; do all[$v]=""; done
for ((r = 0; r < ROUNDS; r++)); do
    line="round $r:"
    for ((i = 0; i < 4; i++)); do
        v=${variants[$(((i + r) % 4))]}
        x=$(one "$v")
        all[$v]="${all[$v]} $x"
        line="$line $v=$x"
        if [ "$v" = trlat ] && [ "$r" = 0 ]; then
            cp "$TMP/r.json" "$TMP/first.json" 2>/dev/null
            grep -h 'trlat:' "$TMP/err" | head -3
        fi
        [ "$v" = cupti ] && [ "$r" = 0 ] && grep -h 'cupti_min' "$TMP/err"
    done
    echo "$line"
done

python3 - "$TMP/first.json" "$N" "${all[raw]}" "${all[cupti]}" "${all[trlat]}" "${all[trlat_off]}" <<'PY'
import json, math, statistics, sys
path, n = sys.argv[1], int(sys.argv[2])
vals = [[float(x) for x in s.split() if x != "nan"] for s in sys.argv[3:7]]
if any(not v for v in vals):
    print("FAIL some variant produced no number"); sys.exit(1)
raw, cupti, trlat, off = (statistics.median(v) for v in vals)
print(f"medians (ns per launch): raw {raw:.0f}  cupti_min {cupti:.0f}  trlat+CUPTI {trlat:.0f}  trlat, CUPTI off {off:.0f}")
print(f"CUPTI kernel activity alone: +{cupti - raw:.0f} ns per launch (FACTS.md: ~1600)")
print(f"trlat with CUPTI beyond CUPTI itself: {trlat - cupti:+.0f} ns per launch (budget 300)")
print(f"trlat with CUPTI off: {off - raw:+.0f} ns per launch")
print(f"TABLE cupti_cost raw_ns {raw:.0f} cupti_ns {cupti:.0f} trlat_cupti_ns {trlat:.0f} trlat_off_ns {off:.0f} "
      f"cupti_delta_ns {cupti - raw:.0f} trlat_beyond_cupti_ns {trlat - cupti:.0f}")
print(("PASS" if trlat - cupti <= 300 else "FAIL") + f" trlat with CUPTI adds <= 300 ns beyond CUPTI itself: {trlat - cupti:+.0f} ns")
try:
    r = json.load(open(path))
    k = max(r["kernels"], key=lambda k: k["launches"])
    ok = (r["config"]["cupti"] == "on" and k["sources"]["driver"] == n + 2000 and k["sources"]["runtime"] == 0
          and k["gpu_ns"] and k["gpu_ns"]["count"] == n + 2000 and r["gpu"]["joined_by_trlat_id"] == n + 2000)
    print(("PASS" if ok else "FAIL") + f" trlat's report joined every launch with its GPU record: cupti={r['config']['cupti']}"
          f" reason={r['config']['cupti_reason']} {k['name']} launches={k['launches']} sources={k['sources']}"
          f" gpu_count={k['gpu_ns'] and k['gpu_ns']['count']} gpu_p50={k['gpu_ns'] and k['gpu_ns']['p50']}ns"
          f" gpu section={r.get('gpu')}")
except Exception as e:
    print(f"FAIL trlat's report unreadable: {e}")
PY
