#!/usr/bin/env bash
# One workload of tests/gpu/real_models.py under the run-time A/B with two
# builds and with and without the per-arm report flushes, in one session:
# which of a change or the measurement moved the fast path's step ratio.
# AB_ROUNDS=N repeats the builds in turn N times (default 1); AB_FLUSHES
# picks the flush settings (default "0 1"; 1 alone: every process prints
# the share of the Triton-side host time removed, over calls under 1 ms).
# Each process has 200 s (AB_TIMEOUT_S), the warm-up without trlat 400
# (AB_WARM_S: a cold FlagGems tunes its matmuls there).
#   [AB_ROUNDS=3] [AB_FLUSHES=1] bash scripts/probes/ab_bisect.sh WORKLOAD STEPS BUILD_A BUILD_B
set -u
cd "$(dirname "$0")/../.." || exit 1
w=$1 steps=$2; shift 2
. scripts/probes/gpu_env.sh
py() {
    timeout "${AB_TIMEOUT_S:-200}" python3 tests/gpu/real_models.py "$w" "$steps" 2>&1 | grep -E '^(AB_|STEP_US|TOKENS)' |
        awk '{ print } /^AB_STEADY_US/ && $5 > 0 { printf "removed (calls under 1 ms): %.1f%%\n", 100 * ($5 - $3) / $5 }'
}
echo "== $w warm-up, no trlat"; AB_TIMEOUT_S=${AB_WARM_S:-400} py
for r in $(seq "${AB_ROUNDS:-1}"); do
    for b in "$@"; do
        for flush in ${AB_FLUSHES:-0 1}; do
            echo "== $w $b, flushes $flush, round $r"
            REAL_AB_HOST=$flush TRLAT_FASTPATH=1 TRLAT_TIMING=all REAL_AB=1 LD_PRELOAD=$b/libtrlat.so py
        done
    done
done
