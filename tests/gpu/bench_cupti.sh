#!/usr/bin/env bash
# CUPTI's cost per launch, and trlat's cost beyond it, on the raw C loop of
# cuLaunchKernelEx (GPU machine). Variants, one process each, all in every
# round, their order rotated from round to round:
#   raw        bench_launch N
#   cupti      LD_PRELOAD=libcupti_min.so bench_launch N   (kernel activity only: "CUPTI itself")
#   cupti_cb   the same with CUPTI_MIN_CALLBACK=1 CUPTI_MIN_TS=1: empty launch
#              callbacks on trlat's functions and a timestamp callback like
#              trlat's (CUPTI's machinery that trlat uses, without trlat)
#   trlat      LD_PRELOAD=libtrlat.so TRLAT_CUPTI=1 bench_launch N
#   trlat_off  LD_PRELOAD=libtrlat.so TRLAT_CUPTI=0 bench_launch N (the interposer alone)
# All CUPTI clients load the same libcupti (TRLAT_CUPTI_LIB). bench_launch
# makes its CUDA context before trlat starts.
#
#   tests/gpu/bench_cupti.sh [BENCH_LAUNCH [N [ROUNDS]]]    defaults: build/tests/gpu/bench_launch 100000 15
#
# The machine is noisy: a variant's median over rounds moves by hundreds of
# ns from run to run. The figures that count are the medians of the
# per-round paired differences (variant minus cupti measured in the same
# round). Prints each round, the medians, TABLE lines, and
#   PASS/FAIL trlat with CUPTI adds <= 300 ns beyond CUPTI itself (kernel activity only)
#   INFO      trlat beyond CUPTI with the same callbacks (trlat's own work)
#   PASS/FAIL trlat's report joined every launch with its GPU record
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-$PWD/build}
BENCH=${1:-$BUILD/tests/gpu/bench_launch}
N=${2:-100000}
ROUNDS=${3:-15}
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

# Every process on the same two CPUs (BENCH_CPUS, default the last two we
# may use): where the scheduler puts a process must not decide the result.
CPUS=${BENCH_CPUS:-$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[-2:])))' 2>/dev/null)}
PIN=()
if [ -n "$CPUS" ] && command -v taskset >/dev/null; then PIN=(taskset -c "$CPUS"); fi
echo "processes on CPUs: ${CPUS:-(any: no taskset)}"

one() { # one VARIANT -> ns per launch on stdout
    local out
    case $1 in
        raw) out=$("${PIN[@]}" "$BENCH" "$N" 2>"$TMP/err") ;;
        cupti) out=$("${PIN[@]}" env LD_PRELOAD=$MIN "$BENCH" "$N" 2>"$TMP/err") ;;
        cupti_cb) out=$("${PIN[@]}" env CUPTI_MIN_CALLBACK=1 CUPTI_MIN_TS=1 LD_PRELOAD=$MIN "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat) out=$("${PIN[@]}" env TRLAT_CUPTI=1 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/r.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
        trlat_off) out=$("${PIN[@]}" env TRLAT_CUPTI=0 TRLAT_SUMMARY=0 TRLAT_OUTPUT=$TMP/off.json LD_PRELOAD=$LIB "$BENCH" "$N" 2>"$TMP/err") ;;
    esac
    local v=${out#ns_per_launch=}
    if [ "$v" = "$out" ] || [ -z "$v" ]; then
        echo "FAIL $1 run: $out $(tail -3 "$TMP/err")" >&2
        echo nan
    else
        echo "$v"
    fi
}

variants=(raw cupti cupti_cb trlat trlat_off)
nv=${#variants[@]}
declare -A all
for v in "${variants[@]}"; do all[$v]=""; done
for ((r = 0; r < ROUNDS; r++)); do
    line="round $r:"
    for ((i = 0; i < nv; i++)); do
        v=${variants[$(((i + r) % nv))]}
        x=$(one "$v")
        all[$v]="${all[$v]} $x"
        line="$line $v=$x"
        if [ "$v" = trlat ] && [ "$r" = 0 ]; then
            cp "$TMP/r.json" "$TMP/first.json" 2>/dev/null
            grep -h 'trlat:' "$TMP/err" | head -3
        fi
        case $v in cupti | cupti_cb) [ "$r" = 0 ] && grep -h 'cupti_min' "$TMP/err" ;; esac
    done
    echo "$line"
done

python3 - "$TMP/first.json" "$N" "${all[raw]}" "${all[cupti]}" "${all[cupti_cb]}" "${all[trlat]}" "${all[trlat_off]}" <<'PY'
import json, math, statistics, sys
path, n = sys.argv[1], int(sys.argv[2])
names = ["raw", "cupti", "cupti_cb", "trlat", "trlat_off"]
rounds = {k: [float(x) for x in s.split()] for k, s in zip(names, sys.argv[3:8])}
if any(not [x for x in v if not math.isnan(x)] for v in rounds.values()):
    print("FAIL some variant produced no number"); sys.exit(1)
med = {k: statistics.median([x for x in v if not math.isnan(x)]) for k, v in rounds.items()}

def paired(a, b):  # median over rounds of (a - b), rounds where both ran
    d = [x - y for x, y in zip(rounds[a], rounds[b]) if not (math.isnan(x) or math.isnan(y))]
    return statistics.median(d), len(d), (min(d), max(d))

cupti_own, _, _ = paired("cupti", "raw")
cb_own, _, _ = paired("cupti_cb", "cupti")
beyond, nr, spread = paired("trlat", "cupti")
beyond_cb, _, spread_cb = paired("trlat", "cupti_cb")
off, _, _ = paired("trlat_off", "raw")
print("medians (ns per launch): " + "  ".join(f"{k} {med[k]:.0f}" for k in names))
print(f"median of per-round paired differences over {nr} rounds (ns per launch):")
print(f"  CUPTI itself (kernel activity only) - raw:            {cupti_own:+.0f}")
print(f"  CUPTI with trlat's callbacks and clock - CUPTI itself: {cb_own:+.0f}")
print(f"  trlat with CUPTI - CUPTI itself:                        {beyond:+.0f} (rounds {spread[0]:+.0f} .. {spread[1]:+.0f})")
print(f"  trlat with CUPTI - CUPTI with the same callbacks:       {beyond_cb:+.0f} (rounds {spread_cb[0]:+.0f} .. {spread_cb[1]:+.0f})")
print(f"  trlat, CUPTI off - raw:                                 {off:+.0f}")
print(f"TABLE cupti_cost raw_ns {med['raw']:.0f} cupti_ns {med['cupti']:.0f} cupti_cb_ns {med['cupti_cb']:.0f} "
      f"trlat_cupti_ns {med['trlat']:.0f} trlat_off_ns {med['trlat_off']:.0f} cupti_delta_ns {cupti_own:.0f} "
      f"cupti_cb_beyond_cupti_ns {cb_own:.0f} trlat_beyond_cupti_ns {beyond:.0f} "
      f"trlat_beyond_cupti_cb_ns {beyond_cb:.0f} trlat_off_delta_ns {off:.0f} rounds {nr} launches {n}")
print(("PASS" if beyond <= 300 else "FAIL") +
      f" trlat with CUPTI adds <= 300 ns beyond CUPTI itself: {beyond:+.0f} ns per launch (median of per-round "
      f"paired differences; CUPTI itself, kernel activity only, costs {cupti_own:+.0f} ns over the raw loop)")
print(f"INFO trlat beyond CUPTI with the same launch callbacks and timestamp callback (trlat's own work): "
      f"{beyond_cb:+.0f} ns per launch; those callbacks themselves cost {cb_own:+.0f} ns")
try:
    r = json.load(open(path))
    k = max(r["kernels"], key=lambda k: k["launches"])
    g = r.get("gpu") or {}
    total = n + 2000
    ok = (r["config"]["cupti"] == "on" and k["sources"]["driver"] == total and k["sources"]["runtime"] == 0
          and k["gpu_ns"] and k["gpu_ns"]["count"] == total and g.get("joined_by_trlat_id") == total
          and g.get("unjoined_records") == 0 and g.get("lost_join_records") == 0)
    gpu_sum = k["gpu_ns"]["sum"] if k["gpu_ns"] else 0
    share = (k["starved_ns"] or 0) / ((k["starved_ns"] or 0) + gpu_sum) if gpu_sum else 0
    print(f"TABLE cupti_join launches {total} joined {g.get('joined_by_trlat_id')} unjoined "
          f"{g.get('unjoined_records')} lost {g.get('lost_join_records')} starved_launches {k['starved_launches']} "
          f"starved_share {share:.3f}")
    print(("PASS" if ok else "FAIL") + f" trlat's report joined every launch with its GPU record:"
          f" cupti={r['config']['cupti']} reason={r['config']['cupti_reason']} {k['name']} launches={k['launches']}"
          f" sources={k['sources']} gpu_count={k['gpu_ns'] and k['gpu_ns']['count']}"
          f" gpu_p50={k['gpu_ns'] and k['gpu_ns']['p50']}ns gpu section={g}")
except Exception as e:
    print(f"FAIL trlat's report unreadable: {e}")
PY
