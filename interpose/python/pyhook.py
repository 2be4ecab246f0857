# trlat's Python hook installer. libtrlat.so runs this file itself, by
# absolute path from its own install directory (never through sys.path), in
# a namespace of its own, on Python's main thread with the GIL held. It
# imports nothing but `atexit` (built in, when loaded) and `dis` (once, to
# read __getitem__; `sys` is always loaded). The hot part (the wrapper around
# JITFunction.run) is C: _trlat_wrap(original, kind) returns it.
#
# Given to this file by libtrlat.so: _trlat_wrap, _trlat_subscript_lambda,
# _trlat_site_rule, _trlat_log, _trlat_state, _trlat_finish_at_exit.
#
# What is wrapped, each timing the thread's outermost call only:
# - JITFunction.run, Autotuner.run, Heuristics.run (JIT .. HEURISTICS);
# - the run of every other KernelInterface subclass that defines one, a
#   library's (FlagGems' LibEntry, LibTuner) or Inductor's CachingAutotuner
#   (ENTRY): found when patched and, through KernelInterface's
#   __init_subclass__, as each is defined;
# - Triton's CUDA launcher, CudaLauncher.__call__ (LAUNCHER), under every
#   Python launch of a compiled kernel: a CompiledKernel called directly
#   (compiled[grid](...), CompiledKernel.run(...)) and launchers that call
#   it from code trlat does not know;
# - KernelInterface.__getitem__ and CompiledKernel.__getitem__ (GETITEM,
#   COMPILED_GETITEM), noting when kernel[grid] was evaluated;
# - CudaLauncher.__init__ (LAUNCHER_INIT), under TRLAT_FASTPATH only: the
#   launcher memo reads each launcher's signature as it is made;
# - torch's static CUDA launcher, StaticallyLaunchedTritonKernel.run
#   (STATIC_RUN): found with Inductor's CachingAutotuner, whose module
#   imports it first; timed when a program calls a launcher of Inductor's
#   itself, the fast path's static layer under TRLAT_FASTPATH;
# - triton.runtime.jit.compute_cache_key and CompiledKernel.launch_metadata
#   (PHASE_KEY, PHASE_META), under TRLAT_PY_PHASES only: marks in a call's
#   py->driver (interpose/python/pyphase.h).
# libtrlat.so loads it at trlat's start in any Python process, Triton or
# not, and calls poll() until it returns True.
import atexit
import sys

JIT, AUTOTUNER, HEURISTICS, GETITEM, ENTRY, LAUNCHER, COMPILED_GETITEM, LAUNCHER_INIT = 0, 1, 2, 3, 4, 5, 6, 7
PHASE_KEY, PHASE_META, STATIC_RUN = 8, 9, 10
CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08

_patched = {}    # class -> original run
_subclass_hooked = set()  # KernelInterface classes whose __init_subclass__ patches
_refused = False
_busy = False
_said = set()


def _say_once(key, message):
    if key not in _said:
        _said.add(key)
        _trlat_log(message)


def _has_shape(fn, kwonly):
    """Whether fn is def run(self, *args, <kwonly...>, **kwargs)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    n = len(kwonly)
    return (code.co_argcount == 1 and getattr(code, "co_posonlyargcount", 0) == 0
            and code.co_kwonlyargcount == n and code.co_varnames[:1 + n] == ("self", ) + kwonly
            and code.co_flags & (CO_VARARGS | CO_VARKEYWORDS) == CO_VARARGS | CO_VARKEYWORDS)


def _patch(cls, kind, kwonly, label, version):
    if cls in _patched:
        return True
    run = cls.__dict__.get("run")
    if not _has_shape(run, kwonly):
        _say_once(label, "Triton %s: %s.run is not run(self, *args%s, **kwargs); its calls are not timed"
                  % (version, label, "".join(", " + k for k in kwonly)))
        return False
    setattr(cls, "run", _trlat_wrap(run, kind))
    _patched[cls] = run
    return True


def _patch_subscript(cls, version, kind=GETITEM):
    """KernelInterface.__getitem__(self, grid) or CompiledKernel's, wrapped
    to note when kernel[grid] was evaluated (the start of the call's
    py->driver time)."""
    if cls is None or cls in _patched:
        return True
    fn = cls.__dict__.get("__getitem__")
    code = getattr(fn, "__code__", None)
    if code is None or code.co_argcount != 2 or code.co_flags & (CO_VARARGS | CO_VARKEYWORDS):
        _say_once(cls.__name__, "Triton %s: %s.__getitem__ is not (self, grid); "
                  "py->driver times start at run()" % (version, cls.__name__))
        _patched[cls] = fn
        return True
    wrapped = _trlat_wrap(fn, kind)
    if wrapped is not None:  # None: the fast path installs its own
        lam = _subscript_lambda(code) if kind == GETITEM else None
        if lam is not None:
            _trlat_subscript_lambda(lam, fn.__globals__, lam.co_freevars == ("self", "grid"))
        setattr(cls, "__getitem__", wrapped)
    _patched[cls] = fn
    return True


def _patch_phase(owner, name, kind):
    """owner.name (a module's function or a class's method) wrapped to mark
    a phase of the open Triton call; left as it is when the wrapper says
    None (TRLAT_PY_PHASES off) or it is not a plain Python function. Never
    holds up poll(): a Triton without it has no such phase."""
    key = (owner, name)
    fn = getattr(owner, "__dict__", {}).get(name)
    if key in _patched or fn is None or getattr(fn, "__code__", None) is None:
        return
    wrapped = _trlat_wrap(fn, kind)
    if wrapped is not None:
        setattr(owner, name, wrapped)
    _patched[key] = fn


def _patch_plain(cls, name, kind, say=True):
    """cls.name, any plain function, wrapped to time the outermost call: the
    wrapper passes every argument through as it came. Anything else there
    (a staticmethod, a C function) is left as it is, said once when say.
    LAUNCHER_INIT (CudaLauncher.__init__, for the fast path) is left as it
    is when the wrapper says None (the fast path is off)."""
    key = cls if name != "__init__" else (cls, name)
    if key in _patched:
        return True
    fn = cls.__dict__.get(name)
    if fn is None:
        return False  # inherited: the class that defines it is patched
    if getattr(fn, "__code__", None) is None:
        if say:
            _say_once(cls.__name__, "%s.%s is not a Python function; the calls through it are timed from "
                      "the driver only" % (cls.__name__, name))
        _patched[key] = fn
        return True
    wrapped = _trlat_wrap(fn, kind)
    if wrapped is not None:
        setattr(cls, name, wrapped)
    _patched[key] = fn
    return True


def _patch_entry(cls):
    """The run of a KernelInterface subclass of a library or Inductor's."""
    mod = getattr(cls, "__module__", "") or ""
    if mod == "triton" or mod.startswith("triton."):
        return  # Triton's own: patched by name
    if mod.startswith("torch._inductor.runtime."):
        d = _dir_of(getattr(sys.modules.get(mod), "__file__", None))
        if d:
            _trlat_site_rule(False, d)  # Inductor's runtime: no call site in it
    _patch_plain(cls, "run", ENTRY, say=False)  # a library's own design: nothing to say
    if mod == "torch._inductor.runtime.triton_heuristics":
        static = getattr(sys.modules.get("torch._inductor.runtime.static_triton_launcher"),
                         "StaticallyLaunchedTritonKernel", None)
        if isinstance(static, type):
            _patch_plain(static, "run", STATIC_RUN, say=False)


def _subclasses(root):
    seen, todo = [], [root]
    while todo:
        for c in type.__subclasses__(todo.pop()):
            if c not in seen:
                seen.append(c)
                todo.append(c)
    return seen


def _hook_subclasses(ki):
    """Patches the KernelInterface subclasses there are, and makes
    KernelInterface patch each one defined later, when it is defined."""
    if ki is None or ki in _subclass_hooked:
        return
    prev = ki.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if prev is not None:
            prev.__get__(None, cls)(**kwargs)
        else:
            super(ki, cls).__init_subclass__(**kwargs)
        try:
            _patch_entry(cls)
        except Exception:  # never in the way of the class's definition
            pass

    ki.__init_subclass__ = classmethod(__init_subclass__)
    _subclass_hooked.add(ki)
    for c in _subclasses(ki):
        _patch_entry(c)


def _library_rules():
    """Files that are not the program's own: the interpreter's library,
    installed packages, Inductor's and FlagGems' generated code."""
    osmod = sys.modules.get("os")
    d = _dir_of(getattr(osmod, "__file__", None))
    if d:
        _trlat_site_rule(True, d)
    # FlagGems writes its generated wrappers (pointwise_dynamic's) under
    # ~/.flaggems or $FLAGGEMS_CACHE_DIR, Inductor its code under
    # torchinductor_<user> or $TORCHINDUCTOR_CACHE_DIR
    for r in ("*/site-packages/", "*/dist-packages/", "*/torchinductor_", "*/.flaggems/"):
        _trlat_site_rule(True, r)
    env = getattr(osmod, "environ", {})
    for v in ("TORCHINDUCTOR_CACHE_DIR", "FLAGGEMS_CACHE_DIR"):
        d = env.get(v)
        if d:
            _trlat_site_rule(True, d.rstrip("/") + "/")


def _subscript_lambda(code):
    """The lambda's code object when __getitem__ is exactly `return lambda
    *args, **kwargs: ...` closing over self and grid and nothing else
    (Triton 3.x), so that the wrapper can make that function itself (same
    code, globals, name, closure) without running the method; else None.
    Python 3.11+ (co_qualname: the made function gets the same name)."""
    if sys.version_info < (3, 11):
        return None
    inner = [c for c in code.co_consts if type(c) is type(code)]
    if len(inner) != 1 or code.co_names or code.co_varnames != ("self", "grid"):
        return None
    lam = inner[0]
    if (lam.co_name != "<lambda>" or sorted(lam.co_freevars) != ["grid", "self"]
            or sorted(code.co_cellvars) != ["grid", "self"]):
        return None
    import dis  # once, at install
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "NOP", "RESUME", "MAKE_CELL",
                                                                       "COPY_FREE_VARS")]
    ops = [i.opname for i in ins]
    closure_flag = [i.arg for i in ins if i.opname in ("MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE")]
    if sys.version_info >= (3, 13):
        want = ["LOAD_FAST", "LOAD_FAST", "BUILD_TUPLE", "LOAD_CONST", "MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE",
                "RETURN_VALUE"]
        flag_ok = closure_flag[-1:] == [8]
    else:
        want = ["LOAD_CLOSURE", "LOAD_CLOSURE", "BUILD_TUPLE", "LOAD_CONST", "MAKE_FUNCTION", "RETURN_VALUE"]
        flag_ok = closure_flag == [8]
    if ops != want or not flag_ok or [i.argval for i in ins if i.opname == "LOAD_CONST"] != [lam]:
        return None
    return lam


def _dir_of(path):
    """A file's directory with its trailing slash, or None."""
    return path[:path.rfind("/") + 1] if path and "/" in path else None


def _version(triton):
    v = getattr(triton, "__version__", None)
    return v if isinstance(v, str) else "unknown"


def _poll():
    global _refused
    jit = sys.modules.get("triton.runtime.jit")
    jitfn = getattr(jit, "JITFunction", None)
    if jitfn is None or "run" not in jitfn.__dict__:
        _state("waiting", None, None)
        return False
    triton = sys.modules.get("triton")
    version = _version(triton)
    if jitfn not in _patched:
        major = version.split(".")[0]
        if major != "3" or not _has_shape(jitfn.__dict__["run"], ("grid", "warmup")):
            _refused = True
            why = ("Triton %s is not a version trlat recognises (3.x with "
                   "JITFunction.run(self, *args, grid, warmup, **kwargs))" % version)
            _state("not_recognised", version, why)
            _trlat_log(why + "; profiling without the Python hook")
            _unwatch()
            return True
        f = getattr(triton, "__file__", None) or getattr(jit, "__file__", None) or ""
        if getattr(triton, "__file__", None) is None:
            f = f[:f.rfind("/")]  # .../triton/runtime/jit.py -> .../triton/runtime
        d = _dir_of(f)
        if d:
            _trlat_site_rule(False, d)  # Triton's package: no call site in it
        _library_rules()
        _patch(jitfn, JIT, ("grid", "warmup"), "JITFunction", version)
        _patch_subscript(getattr(jit, "KernelInterface", None), version)
        _state("installed", version, None)
    auto = sys.modules.get("triton.runtime.autotuner")
    done = True
    for name, kind in (("Autotuner", AUTOTUNER), ("Heuristics", HEURISTICS)):
        cls = getattr(auto, name, None)
        if cls is None or "run" not in cls.__dict__:
            done = False  # not loaded yet: keep watching imports
        else:
            _patch(cls, kind, (), name, version)
    _hook_subclasses(getattr(jit, "KernelInterface", None))
    compiled = getattr(sys.modules.get("triton.compiler.compiler"), "CompiledKernel", None)
    launcher = getattr(sys.modules.get("triton.backends.nvidia.driver"), "CudaLauncher", None)
    # the launcher's module is loaded with the first kernel: until then
    # each kernel load asks again (poll() is False)
    done = (_patch_subscript(compiled, version, COMPILED_GETITEM) if compiled else False) and done
    _patch_phase(jit, "compute_cache_key", PHASE_KEY)
    if compiled is not None:
        _patch_phase(compiled, "launch_metadata", PHASE_META)
    done = (launcher is not None and _patch_plain(launcher, "__call__", LAUNCHER)
            and _patch_plain(launcher, "__init__", LAUNCHER_INIT, say=False)) and done
    if done:
        _unwatch()
    return done


def _state(state, version, reason):
    _trlat_state(state, version, reason)


def poll():
    """Patches what is loaded; True once all is patched, or refused."""
    global _busy
    if _refused:
        return True
    if _busy:
        return False
    _busy = True
    try:
        done = _poll()
        if not done:
            _watch()
        return done
    finally:
        _busy = False


class _Watcher:
    """On sys.meta_path while Triton's classes are not all patched: looks
    again at every import (Triton imports more modules right after
    triton.runtime.jit), finds nothing itself."""

    def find_spec(self, name, path=None, target=None):
        if not _busy and "triton.runtime.jit" in sys.modules:
            poll()
        return None

    def invalidate_caches(self):
        pass


_watcher = _Watcher()


def _watch():
    if not any(f is _watcher for f in sys.meta_path):
        sys.meta_path.insert(0, _watcher)


def _unwatch():
    if any(f is _watcher for f in sys.meta_path):
        # A new list: an import in progress may be iterating the old one.
        sys.meta_path = [f for f in sys.meta_path if f is not _watcher]


def _at_exit():
    """Python's atexit, run while the interpreter finalizes. One that ends on
    an uncaught KeyboardInterrupt then kills itself with SIGINT
    (Modules/main.c, exit_sigint), so C's atexit, which writes the report,
    never runs: have it written at the end of finalization instead.
    PyErr_Print stored that exception in sys.last_value just before. Any
    other exit leaves the report to C's atexit, as without this."""
    if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):
        _trlat_finish_at_exit()


atexit.register(_at_exit)
