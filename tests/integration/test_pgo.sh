#!/usr/bin/env bash
# scripts/pgo-build.sh (make pgo): the library built with profile feedback
# from a fresh tree, trained on the hit path, exports what the plain build
# exports and launches what it launches (the corpus of tests/fastpath, the
# fast path off with the plain build and on with this one).
. "$(dirname "$0")/lib.sh"

py=$(find_pythons 12 | head -1)
[ -n "$py" ] || { fail "pgo" "no Python 3.12+ found (the training needs one)"; exit 0; }

P=$WORK/b
(cd "$ROOT" && BUILD=$P PGO_PYTHON=$py bash scripts/pgo-build.sh) >"$WORK/build.out" 2>&1
expect "pgo: builds" "$?:$(tail -1 "$WORK/build.out")" "0:pgo-build: $P/libtrlat.so built with profile feedback"
# the counts the second build used: the hit path's files ran in training
for f in fastpath/lastcall fastpath/replay fastpath/getitem interpose/launch; do
    expect "pgo: $f trained" "$([ -s "$P/pgo/obj/$f.gcda" ] && echo yes)" yes
done
# the launch path's helpers stay inline in the wrapper (a profile that saw
# mostly hits once left record() and the clock read out of line there)
expect "pgo: launch path helpers inline" \
    "$(nm "$P/libtrlat.so" | grep -cE ' (record|trlat_ticks|trlat_stamp|trlat_rec_add|python_part|needs_slow)(\.|$)')" 0
exports() { nm -D --defined-only "$1" | awk '{print $3}' | sort | tr '\n' ' '; }
expect "pgo: same exports as the plain build" "$(exports "$P/libtrlat.so")" "$(exports "$LIB")"

run() { # TAG LIB FASTPATH
    env TRLAT_FASTPATH=$3 TRLAT_FASTPATH_LOG="$WORK/$1.log" TRLAT_OUTPUT="$WORK/$1.json" LD_PRELOAD=$2 \
        "$py" "$ROOT/tests/fastpath/prog.py" corpus 4 >"$WORK/$1.out" 2>"$WORK/$1.err"
    echo $? >>"$WORK/$1.out"
}
run off "$LIB" 0
run on "$P/libtrlat.so" 1
expect "pgo: corpus output as without the fast path" "$(cat "$WORK/on.out")" "$(cat "$WORK/off.out")"
if [ -s "$WORK/off.log" ] && cmp -s "$WORK/off.log" "$WORK/on.log"; then ok "pgo: corpus launches as without the fast path"; else
    fail "pgo: corpus launches as without the fast path" "$(diff "$WORK/off.log" "$WORK/on.log" | head -4)"; fi
expect "pgo: hits" "$(rq "$WORK/on.json" 'sum(k["fastpath"]["hits"] for k in r["kernels"] if k["fastpath"]) > 50')" True

# A toolchain that cannot link with -flto (the GPU machine's gcc has no
# lto-wrapper): make and make pgo build without it and say so.
cat >"$WORK/cc" <<'CC'
#!/bin/sh
for a in "$@"; do case "$a" in -flto*) echo "ld: error: could not run lto-wrapper" >&2; exit 1 ;; esac; done
exec "${REAL_CC:-cc}" "$@"
CC
chmod +x "$WORK/cc"
N=$WORK/nolto
REAL_CC=${CC:-cc} # the compiler the wrapper runs: the caller's, read before CC names the wrapper
(cd "$ROOT" && export REAL_CC && export CC=$WORK/cc BUILD=$N &&
    make -s -j4 "$N/libtrlat.so" && PGO_PYTHON=$py bash scripts/pgo-build.sh) >"$WORK/nolto.out" 2>&1
expect "pgo: builds where cc cannot link with -flto" "$?:$(tail -1 "$WORK/nolto.out")" \
    "0:pgo-build: $N/libtrlat.so built with profile feedback"
expect "pgo: says it builds without link-time optimization" \
    "$(grep -q 'cannot link with -flto here: building without link-time optimization' "$WORK/nolto.out" && echo yes)" yes
expect "pgo: same exports without link-time optimization" "$(exports "$N/libtrlat.so")" "$(exports "$LIB")"
# a target added for the scripts did not become the default goal
expect "make: the default goal builds the library" \
    "$(cd "$ROOT" && make -n BUILD="$WORK/dflt" 2>/dev/null | grep -c -- "-o $WORK/dflt/libtrlat.so")" 1
