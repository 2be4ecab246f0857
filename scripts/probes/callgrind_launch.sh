#!/usr/bin/env bash
# Instructions per profiled launch on the CPU machine: `launcher direct_ex`
# on the fake driver under callgrind, counted inside trlat's cuLaunchKernelEx
# (the toggle is the name both trlat's wrapper and the fake driver carry, so
# collection stops again inside the driver: the wrapper's own instructions).
#   [TRLAT_LIB=<libtrlat.so>] [N=20000] bash scripts/probes/callgrind_launch.sh   (after make test-build)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/build/tests/fake TRLAT_SUMMARY=0 TRLAT_CUPTI=0 TRLAT_OUTPUT=/tmp/trlat-probe-%p.json
lib=${TRLAT_LIB:-$PWD/build/libtrlat.so}
n=${N:-20000}
out=$(mktemp)
LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect=cuLaunchKernelEx \
    build/tests/bin/launcher direct_ex "$n" >/dev/null 2>&1
ir=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
rm -f "$out" /tmp/trlat-probe-*.json
echo "direct_ex: $ir instructions in $n launches, $((ir / n)) per launch"
