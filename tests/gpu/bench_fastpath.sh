#!/usr/bin/env bash
# The fast path's benchmark (issue 5: scripts/bench_fastpath.py) as a suite
# of scripts/gpu-test.sh, with the arguments of the runs in
# docs/BENCHMARKS.md (about 7.5 minutes); BENCH_FASTPATH_ARGS replaces them.
# shellcheck disable=SC2086
exec python3 "$(dirname "$0")/../../scripts/bench_fastpath.py" \
    ${BENCH_FASTPATH_ARGS:---rounds 3 --n 8000 --steps 100 --ab-rounds 2 --ab-pairs 8 --ab-block 2000}
