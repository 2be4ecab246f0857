# Helpers for integration tests: run a command under trlat on the fake
# driver, query the JSON report, print "ok NAME" / "FAIL NAME: why".
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$ROOT/$BUILD
[ "${BUILD#/}" != "$BUILD" ] && B=$BUILD
LIB=$B/libtrlat.so
BIN=$B/tests/bin
export LD_LIBRARY_PATH=$B/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TRLAT_SUMMARY=0 TRLAT_CUPTI=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# rq FILE EXPR: evaluates a Python expression over the report r; k("name")
# is that kernel's entry (None if absent).
rq() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def k(name):
    return next((x for x in r["kernels"] if x["name"] == name), None)
print(eval(sys.argv[2]))
PY
}

# expect NAME ACTUAL EXPECTED
expect() {
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got '$2', expected '$3'"; fi
}

# the one report in $WORK matching a glob
report_of() { ls $1 2>/dev/null | head -1; }

# other_pythons PY: the distinct CPython 3.9+ interpreters on this machine
# besides PY (python3.9 .. python3.13 on PATH, pyenv's), one per line.
other_pythons() {
    local seen cand opy
    seen=" $(readlink -f "$1") "
    for cand in python3.9 python3.10 python3.11 python3.12 python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
        opy=$("$cand" -c 'import sys; assert sys.version_info >= (3, 9); print(sys.executable)' 2>/dev/null) || continue
        opy=$(readlink -f "$opy")
        case "$seen" in *" $opy "*) continue ;; esac
        seen="$seen$opy "
        echo "$opy"
    done
}

# find_pythons MINOR: the distinct interpreters (their sys.executable) of
# version 3.MINOR or later among python3 (or $PYTHON), python3.12 and
# python3.13, on PATH or under pyenv; one per line, in that order.
find_pythons() {
    local p exe real seen=" "
    for p in "${PYTHON:-python3}" python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 python3.13 \
        /root/.pyenv/versions/3.13*/bin/python3.13; do
        exe=$(command -v "$p" 2>/dev/null) || continue
        real=$("$exe" -c "import sys; print(sys.executable if sys.version_info >= (3, $1) else '')" 2>/dev/null)
        [ -n "$real" ] || continue
        case "$seen" in *" $real "*) ;; *) seen="$seen$real " && echo "$real" ;; esac
    done
}

# fp_run TAG FASTPATH MODE N [env...]: the fast-path suites' workload
# $PROG (default tests/fastpath/prog.py) MODE N under trlat with $PY, TRLAT_FASTPATH set:
# $WORK/TAG.out (stdout, then the exit status), .err, .log (the
# TRLAT_FASTPATH_LOG launch log), .json (the report); fpk TAG EXPR queries it.
fp_run() {
    local tag=$1 fp=$2 mode=$3 n=$4; shift 4
    rm -f "$WORK/$tag.json" "$WORK/$tag.log"
    env "$@" TRLAT_FASTPATH=$fp TRLAT_FASTPATH_LOG="$WORK/$tag.log" TRLAT_OUTPUT="$WORK/$tag.json" \
        LD_PRELOAD=$LIB "$PY" "${PROG:-$ROOT/tests/fastpath/prog.py}" "$mode" "$n" >"$WORK/$tag.out" 2>"$WORK/$tag.err"
    echo $? >>"$WORK/$tag.out"
    touch "$WORK/$tag.log"
}
fpk() { rq "$WORK/$1.json" "$2"; }

# The fast-path suites' comparison of two runs TAG A and B under $WORK
# (A.out, A.log: stdout and the TRLAT_FASTPATH_LOG launch log).
same() { # NAME A B: same stdout and launch log
    expect "$1: same output" "$(cat "$WORK/$3.out")" "$(cat "$WORK/$2.out")"
    if cmp -s "$WORK/$2.log" "$WORK/$3.log" && [ -s "$WORK/$2.log" ]; then ok "$1: same launches"; else
        fail "$1: same launches" "$(diff "$WORK/$2.log" "$WORK/$3.log" | head -4)"; fi
}
