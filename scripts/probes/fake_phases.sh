#!/usr/bin/env bash
# The fast path's hit phases without a real launch: the stand-in Triton, torch's
# CPU tensors and the fake driver (build/tests/fake), on whichever machine runs it
# (docs/BENCHMARKS.md, "the device without cudaGetDevice", 2026-11-30: the GPU machine against the CPU machine).
#   [PYTHON=<a Python with torch>] bash scripts/probes/fake_phases.sh   (after make test-build)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/build/tests/fake TRLAT_SUMMARY=0 TRLAT_CUPTI=0 TRLAT_FASTPATH=1 TRLAT_FASTPATH_PHASES=1 TRLAT_OUTPUT=/tmp/trlat-probe.json
for i in 1 2; do LD_PRELOAD=$PWD/build/libtrlat.so "${PYTHON:-python3}" scripts/probes/hit_nop_with_args.py 200000 2>&1 | tail -3; done
