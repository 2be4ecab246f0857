#!/usr/bin/env bash
# The fast path's benchmark (issue 5: scripts/bench_fastpath.py) as a suite
# of scripts/gpu-test.sh, with the arguments of the runs in
# docs/BENCHMARKS.md; BENCH_FASTPATH_ARGS replaces them (--rounds 3 adds the
# cross-process reference table, about 4.5 more minutes).
# shellcheck disable=SC2086
exec python3 "$(dirname "$0")/../../scripts/bench_fastpath.py" \
    ${BENCH_FASTPATH_ARGS:---rounds 0 --n 8000 --steps 100 --ab-rounds 3 --ab-pairs 8 --ab-block 2000}
