# runtime/jit.py (3.6), reduced to what decides a launch (the compiled
# kernel and its launcher: compiler/compiler.py, backends/nvidia/driver.py):
#  - KernelParam flags, create_function_from_signature's binder, the
#    specialization of specialize.cc (int/bool/float/tensor/None/tuple),
#    compute_cache_key = str(specialization) + str(options);
#  - run(): debug/instrumentation_mode into kwargs, pre_run_hooks,
#    device_caches[device], compile on a cache miss (jit_cache_hook), the
#    used_global_vals check, grid canonicalization, launch;
# A "compile" loads a fresh function handle named after the kernel
# (cuLibraryGetKernel + cuKernelGetFunction) and declares its parameter
# sizes to the fake driver. Test hooks: fn.fake_meta (metadata overrides),
# FAKE_TRITON_SLOW_KEY_US (a slower cache key).
import inspect
import os
from collections import defaultdict

import torch

from .. import knobs
from ..compiler.compiler import ASTSource, CompiledKernel
from .driver import driver

_CANON = {"float32": "fp32", "float16": "fp16", "int32": "i32", "int64": "i64", "bool": "u1"}
# _normalize_ty's type_canonicalisation_dict, in part: `x: int` is i32
_CANON_ANN = dict(_CANON, int="i32", uint64="u64", float="fp32")


class KernelParam:

    def __init__(self, num, param, do_not_specialize, do_not_specialize_on_alignment):
        self.num = num
        self._param = param
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment

    @property
    def name(self):
        return self._param.name

    @property
    def default(self):
        return self._param.default

    @property
    def annotation(self):
        a = self._param.annotation
        if a is inspect.Parameter.empty or not a:
            return ""
        a = a.replace("tl.", "") if isinstance(a, str) else getattr(a, "__name__", str(a))
        return _CANON_ANN.get(a, a)

    @property
    def annotation_type(self):
        a = self.annotation
        return a if a in ("i32", "i64", "u64", "fp32", "fp16", "u1", "*fp32", "*fp16") else ""

    @property
    def is_constexpr(self):
        return "constexpr" in self.annotation

    @property
    def is_const(self):
        return False


_ALIGN = int(os.environ.get("FAKE_TRITON_ALIGN", "16"))


class _Backend:
    supports_native_tensor_specialization = True


def specialize_impl(backend, arg, is_const, specialize, align):
    """specialize.cc specialize_arg, dispatching on the exact type first."""
    t = type(arg)
    if t is int:
        if specialize and arg == 1:
            return ("constexpr", arg)
        if -2**31 <= arg < 2**31:
            ty = "i32"
        elif -2**63 <= arg < 2**63:
            ty = "i64"
        elif 0 <= arg < 2**64:
            ty = "u64"
        else:
            raise OverflowError("integer to be specialized too large to represent")
        return (ty, ("D" if align and arg % 16 == 0 else "") if specialize else None)
    if t is bool:
        return ("u1", None)
    if t is float:
        return ("fp32", None)
    if t is tuple:
        tys, keys = zip(*[specialize_impl(backend, x, False, True, True) for x in arg]) if arg else ((), ())
        return (tuple(tys), tuple(keys))
    if arg is None:
        return ("constexpr", None)
    if type(arg).__name__ == "TensorDescriptor":  # specialize.cc handle_tensor_descriptor
        dt = arg.base.dtype
        ty = _CANON[getattr(dt, "name", None) or str(dt).split(".")[-1]]
        return ("tensordesc<%s%s>" % (ty, list(arg.block_shape)), None)
    if isinstance(arg, torch.Tensor) or hasattr(arg, "data_ptr"):
        dt = arg.dtype  # the stand-in's dtype has .name; real torch's prints "torch.float32"
        ty = "*" + _CANON[getattr(dt, "name", None) or str(dt).split(".")[-1]]
        if not specialize:
            return (ty, None)
        # FAKE_TRITON_ALIGN: a Triton that specializes differently from the
        # memo's model (verify mode must notice)
        return (ty, "D" if align and arg.data_ptr() % _ALIGN == 0 else "")
    raise TypeError("failed to specialize argument of type: %s" % t.__name__)


def create_function_from_signature(sig, kparams, backend):
    specialization = []
    for name, kp in zip(sig.parameters.keys(), kparams):
        if kp.is_constexpr:
            specialization.append(f'("constexpr", {name})')
        else:
            ret = (f"specialize_impl(backend, {name}, {kp.is_const}, {not kp.do_not_specialize}, "
                   f"{not kp.do_not_specialize_on_alignment})")
            if kp.annotation_type:
                spec = not kp.do_not_specialize
                if kp.annotation_type == "u1" or kp.annotation_type[:2] in ["fp", "bf"]:
                    spec = False
                if spec:
                    specialization.append(f'("{kp.annotation_type}",) + {ret}[1:]')
                else:
                    specialization.append(f'("{kp.annotation_type}", None)')
            else:
                specialization.append(ret)
    arg = lambda x: x[0] if x[1].default is inspect.Parameter.empty else f"{x[0]}=default_{x[0]}"
    src = f"""
def dynamic_func({", ".join(list(map(arg, sig.parameters.items())) + ["**options"])}):
    params = {{{', '.join([f"'{name}': {name}" for name in sig.parameters.keys()])}}}
    specialization = [{','.join(specialization)}]
    return params, specialization, options
"""
    ns = {f"default_{n}": p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    ns["specialize_impl"] = specialize_impl
    ns["backend"] = backend
    exec(src, ns)
    return ns["dynamic_func"]


_SLOW_KEY_S = float(os.environ.get("FAKE_TRITON_SLOW_KEY_US", "0")) * 1e-6


def compute_cache_key(kernel_key_cache, specialization, options):
    if _SLOW_KEY_S:  # test hook: a release whose cache lookup got slower (trlat's TRLAT_PY_PHASES test)
        import time
        end = time.perf_counter() + _SLOW_KEY_S
        while time.perf_counter() < end:
            pass
    key = (tuple(specialization), str(options))
    k = kernel_key_cache.get(key)
    if k is None:
        k = kernel_key_cache[key] = str(specialization) + str(options)
    return k


class _Metadata:

    def __init__(self, name, **kw):
        self.name = name
        self.num_warps = kw.get("num_warps", 4)
        self.num_ctas = kw.get("num_ctas", 1)
        self.shared = kw.get("shared", 0)
        self.launch_cooperative_grid = kw.get("launch_cooperative_grid", False)
        self.launch_pdl = kw.get("launch_pdl", False)
        self.global_scratch_size = kw.get("global_scratch_size", 0)
        self.profile_scratch_size = kw.get("profile_scratch_size", 0)
        self.tensordesc_meta = kw.get("tensordesc_meta")


class KernelInterface:

    def warmup(self, *args, grid, **kwargs):
        return self.run(grid=grid, warmup=True, *args, **kwargs)

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError("run not implemented")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)


class JITFunction(KernelInterface):

    def __init__(self, fn, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None):
        dns = do_not_specialize or []
        dnsa = do_not_specialize_on_alignment or []
        self.fn = fn
        self.__name__ = fn.__name__
        self.signature = inspect.signature(fn)
        self.params = []
        for i, p in enumerate(self.signature.parameters.values()):
            self.params.append(KernelParam(i, p, i in dns or p.name in dns, i in dnsa or p.name in dnsa))
        self.device_caches = defaultdict(self.create_binder)
        self.debug = debug
        self.pre_run_hooks = []
        self.used_global_vals = {}
        self.arg_names = [p.name for p in self.params]

    def create_binder(self):
        return {}, {}, "cuda:90", _Backend(), create_function_from_signature(self.signature, self.params, _Backend())

    def add_pre_run_hook(self, hook):
        self.pre_run_hooks.append(hook)

    def _do_compile(self, key, signature, device, options, warmup):
        kernel_cache = self.device_caches[device][0]
        hook = knobs.runtime.jit_cache_hook
        if hook is not None and hook(key=key):
            return None
        md = dict(getattr(self.fn, "fake_meta", {}))
        for k in ("num_warps", "num_ctas", "launch_cooperative_grid", "launch_pdl"):
            if k in options:
                md[k] = options[k]
        kernel = CompiledKernel(ASTSource(self, signature), _Metadata(self.__name__, **md))
        kernel_cache[key] = kernel
        # DependenciesFinder: the globals the kernel reads, with their values
        for name in getattr(self.fn, "fake_globals", ()):
            self.used_global_vals[(name, id(self.fn.__globals__))] = (self.fn.__globals__[name], self.fn.__globals__)
        return kernel

    def run(self, *args, grid, warmup, **kwargs):
        kwargs["debug"] = kwargs.get("debug", self.debug) or knobs.runtime.debug
        kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        device = driver.active.get_current_device()
        stream = driver.active.get_current_stream(device)
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        kernel_cache, kernel_key_cache, target, backend, binder = self.device_caches[device]
        bound_args, specialization, options = binder(*args, **kwargs)
        key = compute_cache_key(kernel_key_cache, specialization, options)
        kernel = kernel_cache.get(key, None)
        if kernel is None:
            signature = {k.name: v[0] for k, v in zip(self.params, specialization)}
            kernel = self._do_compile(key, signature, device, options, warmup)
            if kernel is None:
                return None
        not_present = object()
        for (name, _), (val, globals_dict) in self.used_global_vals.items():
            if (newVal := globals_dict.get(name, not_present)) != val:
                raise RuntimeError(
                    f"Global variable {name} has changed since we compiled this kernel, from {val} to {newVal}")
        if not warmup:
            assert grid is not None
            if callable(grid):
                grid = grid(bound_args)
            grid_size = len(grid)
            grid_0 = grid[0]
            grid_1 = grid[1] if grid_size > 1 else 1
            grid_2 = grid[2] if grid_size > 2 else 1
            launch_metadata = kernel.launch_metadata(grid, stream, *bound_args.values())
            kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata, launch_metadata,
                       knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *bound_args.values())
        return kernel


class JITCallable:
    """jit.py JITCallable, reduced: holds the Python function."""

    def __init__(self, fn):
        self.fn = fn


class BoundConstexprFunction(JITCallable):

    def __init__(self, instance, fn):
        self.__self__ = instance
        self.__func__ = fn

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)


class ConstexprFunction(JITCallable):
    """jit.py ConstexprFunction (3.6): host calls unwrap constexpr arguments,
    call the raw function and return its result (a list and a dict built on
    every call, as Triton's does)."""

    def __init__(self, fn):
        super().__init__(fn)

    def __get__(self, obj, objclass):
        if obj is not None:
            return BoundConstexprFunction(obj, self)
        return self

    def __call__(self, *args, _semantic=None, **kwargs):
        from triton.language import _unwrap_if_constexpr, constexpr
        args = [_unwrap_if_constexpr(x) for x in args]
        kwargs = {k: _unwrap_if_constexpr(v) for (k, v) in kwargs.items()}
        res = self.fn(*args, **kwargs)
        if _semantic is None:
            return res
        if knobs.runtime.interpret:
            return res
        return constexpr(res)


def constexpr_function(fn):
    return ConstexprFunction(fn)


def jit(fn=None, *, do_not_specialize=None, do_not_specialize_on_alignment=None, debug=None):

    def decorator(f):
        return JITFunction(f, do_not_specialize, do_not_specialize_on_alignment, debug)

    return decorator(fn) if fn is not None else decorator
