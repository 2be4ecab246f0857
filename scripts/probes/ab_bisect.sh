#!/usr/bin/env bash
# One workload of tests/gpu/real_models.py under the run-time A/B with two
# builds and with and without the per-arm report flushes, in one session:
# which of a change or the measurement moved the fast path's step ratio.
#   bash scripts/probes/ab_bisect.sh WORKLOAD STEPS BUILD_A BUILD_B
set -u
cd "$(dirname "$0")/../.."
w=$1 steps=$2; shift 2
SITE=${TMPDIR:-/tmp}/trlat-gpu-site/site-packages
if ls .whl/*.whl >/dev/null 2>&1 && [ ! -d "$SITE" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
fi
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
py() { timeout 200 python3 tests/gpu/real_models.py "$w" "$steps" 2>&1 | grep -E '^(AB_|STEP_US)'; }
echo "== $w warm-up, no trlat"; py
for b in "$@"; do
    for flush in 0 1; do
        echo "== $w $b, flushes $flush"
        REAL_AB_HOST=$flush TRLAT_FASTPATH=1 REAL_AB=1 LD_PRELOAD=$b/libtrlat.so py
    done
done
