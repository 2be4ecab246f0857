"""The installed FlagGems' LibEntry against the reference the fast path
models (fastpath/libentry_model.py): its module's source compiled by this
Python, not imported, and LibEntry.run and LibEntry.key compared code
object by code object. PASS when they are the same (trlat then serves
LibEntry.run in C under TRLAT_FASTPATH_LIBENTRY=1), FAIL with the first
difference; skipped when FlagGems is not installed.

  python3 tests/gpu/test_libentry_model.py"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, check, summary  # noqa: E402

spec = importlib.util.find_spec("flag_gems")
if spec is None or not spec.submodule_search_locations:
    print("test_libentry_model: flag_gems is not installed (carry its wheel); skipped")
    sys.exit(0)
path = os.path.join(list(spec.submodule_search_locations)[0], "utils", "libentry.py")
ref = importlib.util.spec_from_file_location("libentry_model", os.path.join(ROOT, "fastpath", "libentry_model.py"))
model = importlib.util.module_from_spec(ref)
ref.loader.exec_module(model)


def method(code, qualname):
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            if c.co_qualname == qualname:
                return c
            found = method(c, qualname)
            if found:
                return found
    return None


class Fn:  # what check() reads of a function
    def __init__(self, code):
        self.__code__ = code


with open(path) as f:
    top = compile(f.read(), path, "exec")
run, key = method(top, "LibEntry.run"), method(top, "LibEntry.key")
why = model.check(Fn(run), Fn(key)) if run and key else "no LibEntry.run or LibEntry.key in " + path
check(f"FlagGems' LibEntry ({path}) is the modelled one under Python {sys.version.split()[0]}", why is None, why)
summary()
