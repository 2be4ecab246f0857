#!/usr/bin/env bash
# What libtrlat.so shows the process: exactly the interposed entry points
# (unversioned, as libcuda's), dlsym under glibc's versions of it,
# NVTX's tool entry point and trlat_api_*; libunwind inside it, hidden, not a dependency.
. "$(dirname "$0")/lib.sh"

old=GLIBC_2.2.5
[ "$(uname -m)" = aarch64 ] && old=GLIBC_2.17
want=$( (grep -o 'X(cu[A-Za-z_0-9]*)' "$ROOT/interpose/fn_list.h" | sed 's/X(\(.*\))/\1/'
    echo dlsym@@GLIBC_2.34; echo "dlsym@$old"; echo InitializeInjectionNvtx2) | sort -u)
got=$(nm -D --defined-only "$LIB" | awk '$2 != "A" {print $3}' | grep -v '^trlat_api_' | sort -u)
expect "exported: the interposed names and dlsym" "$got" "$want"
versions=$(nm -D --defined-only "$LIB" | awk '$2 == "A" {print $3}' | sort | tr '\n' ' ')
expect "versions defined: glibc's of dlsym only" "$versions" "GLIBC_2.17 GLIBC_2.2.5 GLIBC_2.34 "
expect "exported: trlat_api_* only besides" "$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -c '^trlat_')" \
    "$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -c '^trlat_api_')"
expect "no _Unwind_* or unw_* exported or imported" "$(nm -D "$LIB" | grep -cE '_Unwind_|[^_]unw_|__unw_')" 0
expect "no Python symbol linked (reached through dlsym)" "$(nm -D -u "$LIB" | grep -c ' Py')" 0
expect "ldd: no libunwind, no libpython" "$(ldd "$LIB" | grep -cE 'libunwind|libpython')" 0
# Built with libunwind (interpose/native_site.c says so then).
if nm "$B/obj/interpose/native_site.o" 2>/dev/null | grep -q ' trlat_stacks_unwind$'; then
    expect "libunwind linked in, hidden" "$(nm "$LIB" | grep -c ' t __unw_step$')" 1
fi
