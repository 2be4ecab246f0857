#!/usr/bin/env python3
"""The layering rule of README's layout table, checked.

Each source file belongs to the part whose folder is the longest prefix of
its path. A part may include the headers of, and call, only itself and the
parts below it (USES). The `trlat` CLI is its own program: it may include
only the report format's and the histogram's headers (CLI_SHARED).

Includes are read from the sources; calls from the symbol tables of the
library's objects built without link-time optimization (the sanitizer
build, build/san/obj, which `make test-build` makes): every undefined
symbol of an object must be defined in its own part or one it uses, and no
symbol may be defined in two parts (a weak default in a lower part that a
higher one overrides is a call upwards).

Usage: check_layers.py [--root DIR] [--includes-only] [BUILD]
(prints ok/FAIL lines; exit 1 on a FAIL; --root: another tree, for the
check's own test)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# part -> folder; a file's part is its longest matching folder
PARTS = {
    "interpose": "interpose/",
    "cupti": "interpose/cupti/",
    "python": "interpose/python/",
    "fastpath": "fastpath/",
    "report": "report/",
    "cli": "report/cli/",
}
# what each part may include and call besides itself
USES = {
    "interpose": set(),
    "cupti": {"interpose"},
    "python": {"interpose"},
    "fastpath": {"interpose", "python"},
    "report": {"interpose", "cupti", "python", "fastpath"},
    "cli": set(),
}
CLI_SHARED = {"interpose/hist.h", "interpose/format.h"}
SOURCE = re.compile(r"\.(c|h|S)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def part_of(path):
    best = None
    for name, folder in PARTS.items():
        if path.startswith(folder) and (best is None or len(folder) > len(PARTS[best])):
            best = name
    return best


def sources():
    for top in ("interpose", "fastpath", "report"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if SOURCE.search(f):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def check_includes(failures):
    n = 0
    for src in sources():
        n += 1
        part = part_of(src)
        with open(os.path.join(ROOT, src), encoding="utf-8") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = part_of(inc)
            if target is None:
                continue  # tests/, cuda.h's neighbours
            if part == "cli":
                ok = target == "cli" or inc in CLI_SHARED
            else:
                ok = target == part or target in USES[part]
            if not ok:
                failures.append(f"{src} ({part}) includes {inc} ({target})")
    return n


def nm(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            yield fields[0], fields[1]


def check_calls(build, failures):
    objdir = os.path.join(build, "san", "obj")
    if not os.path.isdir(objdir):
        failures.append(f"{objdir} not built (make test-build)")
        return 0
    defined = {}  # symbol -> {part: object}
    undefined = []  # (object, part, symbol)
    objs = 0
    for d, _, files in os.walk(objdir):
        for f in sorted(files):
            if not f.endswith(".o"):
                continue
            obj = os.path.join(d, f)
            src = os.path.relpath(obj, objdir)[: -len(".o")]
            part = part_of(src)
            if part is None:
                continue
            objs += 1
            for sym, kind in nm(obj):
                if kind == "U":
                    undefined.append((src, part, sym))
                elif kind in "TtDdBbRrWwVvGgSs" and kind.isupper() or kind in "WwVv":
                    defined.setdefault(sym, {}).setdefault(part, src)
    for sym, parts in sorted(defined.items()):
        if len(parts) > 1:
            where = ", ".join(f"{src} ({p})" for p, src in sorted(parts.items()))
            failures.append(f"{sym} is defined in several parts: {where}")
    for src, part, sym in undefined:
        parts = defined.get(sym)
        if not parts:
            continue  # libc, libdl, the sanitizers, libunwind
        if part in parts:
            continue
        target = next(iter(parts))
        if target not in USES[part]:
            failures.append(f"{src} ({part}) calls {sym}, defined in {parts[target]} ({target})")
    return objs


def main():
    global ROOT
    args = sys.argv[1:]
    includes_only = "--includes-only" in args
    args = [a for a in args if a != "--includes-only"]
    if args[:1] == ["--root"]:
        ROOT = os.path.abspath(args[1])
        args = args[2:]
    build = args[0] if args else os.path.join(ROOT, os.environ.get("BUILD", "build"))
    inc_fail, call_fail = [], []
    n = check_includes(inc_fail)
    checks = [("includes", inc_fail, f"{n} files")]
    if not includes_only:
        objs = check_calls(build, call_fail)
        checks.append(("calls", call_fail, f"{objs} objects"))
    for what, fails, count in checks:
        if fails:
            for f in fails:
                print(f"FAIL layers {what}: {f}")
        else:
            print(f"ok layers {what}: {count} follow the layout table")
    return 1 if inc_fail or call_fail else 0


if __name__ == "__main__":
    sys.exit(main())
