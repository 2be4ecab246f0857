#!/usr/bin/env bash
# Which launchers torch.compile's kernels use on the GPU machine, and what
# the fast path makes of them: the compile workload of
# tests/gpu/real_models.py run once without trlat (Inductor's caches warm),
# then under TRLAT_FASTPATH=1 with its run-time A/B, with and without
# torch's static CUDA launcher, and profiled. Prints each run's LAUNCHERS,
# AB_US and AB_HOST_US lines and the report's fast-path counts.
#   BUILD=gpu-X bash scripts/probes/inductor_launchers.sh [STEPS]
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
STEPS=${1:-30}
OUT=${OUT:-/tmp}
py() { timeout 240 python3 tests/gpu/real_models.py compile "$STEPS" 2>&1 | grep -E '^(LAUNCHERS|AB_|STEP_US|TOKENS)|trlat: fast path' | head -30; }
counts() {
    python3 - "$1" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1]))
c = collections.Counter()
for k in r["kernels"]:
    if k["name"].startswith("triton_"):
        fp = k.get("fastpath") or {}
        c["launches"] += k["launches"]
        c["py_timed"] += min(k["launches"], (k.get("py_to_driver_ns") or {}).get("count", 0))
        c["hits"] += fp.get("hits", 0)
        c["misses"] += fp.get("misses", 0)
        for why, n in (fp.get("fallbacks") or {}).items():
            c["fallback " + why] += n
print("REPORT", dict(c))
PY
}
echo "== warm-up, no trlat"; py
for static in 1 0; do
    echo "== fast path, A/B, static launcher $static"
    TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=$static TRLAT_FASTPATH=1 REAL_AB=1 TRLAT_FASTPATH_DEBUG=1 \
        TRLAT_OUTPUT=$OUT/ind-ab$static.json LD_PRELOAD=$B/libtrlat.so py
    counts "$OUT/ind-ab$static.json"
done
echo "== profile"
TRLAT_CUPTI=0 TRLAT_OUTPUT=$OUT/ind-prof.json LD_PRELOAD=$B/libtrlat.so py
counts "$OUT/ind-prof.json"
