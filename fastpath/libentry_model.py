# The FlagGems LibEntry.run that trlat's fast path serves in C
# (fastpath/libentry.c), and the check that a loaded LibEntry runs exactly
# it. libtrlat.so reads this file by absolute path from its share
# directory, as gridcheck.py. check(run, key) compiles the reference below
# with the running Python and compares its code objects with the loaded
# class's, field by field (bytecode, constants, names, variables, flags
# but the __future__ ones, exception table), nested code included: None
# when they are the same, else why not. Line numbers are not compared.
#
# The reference is LibEntry.key and LibEntry.run of FlagGems 5.0.2
# (flag_gems/utils/libentry.py, Apache License 2.0, (c) BAAI), methods
# dedented to module level, unchanged otherwise. A FlagGems whose LibEntry
# differs in any way is not served above its compiled[grid] call.
#
# getter(fn) is the same check for a data_ptr method (FlagGems'
# StridedBuffer: `return self._data_ptr`; fastpath/getter.c): the attribute
# name when fn's code is exactly `def data_ptr(self): return self.<name>`
# compiled by the running Python, else None.

REFERENCE = '''from __future__ import annotations

if False:  # never run: the names FlagGems' module binds by import, which
    # CPython's compiler calls methods of differently (no method call on a
    # name an import bound, 3.11+)
    import inspect
    from collections import OrderedDict

    import triton

    from flag_gems.runtime import torch_device_fn

def key(self, spec_args, dns_args, const_args):
    def spec_arg(arg):
        if hasattr(arg, "data_ptr"):
            return (arg.dtype, arg.data_ptr() % self.divisibility == 0)
        return (type(arg), arg)

    def dns_arg(arg):
        if hasattr(arg, "data_ptr"):
            return arg.dtype
        if not isinstance(arg, int):
            return type(arg)
        if -(2**31) <= arg and arg <= 2**31 - 1:
            return "i32"
        if 2**63 <= arg and arg <= 2**64 - 1:
            return "u64"
        return "i64"

    spec_key = [spec_arg(arg) for arg in spec_args]
    dns_key = [dns_arg(arg) for arg in dns_args]
    # const args passed by position
    return tuple(spec_key + dns_key + const_args)

def run(self, *args, **kwargs):
    grid = kwargs["grid"]

    # collect all the arguments
    spec_args = []  # specialize arguments
    dns_args = []  # do not specialize arguments
    const_args = []  # constexpr arguments
    k_args = OrderedDict()
    param_names = list(self.signature.parameters.keys())
    for i, arg in enumerate(args):
        hashable_arg = arg
        if (
            hasattr(arg, "__class__")
            and arg.__class__.__name__ == "TensorDescriptor"
        ):
            # Create a hashable representation of TensorDescriptor
            hashable_arg = (
                "TensorDescriptor",
                tuple(arg.shape) if hasattr(arg, "shape") else None,
                tuple(arg.strides) if hasattr(arg, "strides") else None,
                tuple(arg.block_shape) if hasattr(arg, "block_shape") else None,
                arg.padding if hasattr(arg, "padding") else None,
                # Add other relevant attributes
            )
        if i in self.specialize_indices:
            k_args[param_names[i]] = arg
            spec_args.append(hashable_arg)
        elif i in self.do_not_specialize_indices:
            k_args[param_names[i]] = arg
            dns_args.append(hashable_arg)
        else:
            if major_version == 3 and 3 <= minor_version <= 6:
                k_args[param_names[i]] = arg
            const_args.append(hashable_arg)
    for p in self.jit_function.params[len(args) :]:
        if p.name in kwargs:
            val = kwargs[p.name]
        elif p.default is inspect._empty:
            continue
        else:
            val = p.default

        if p.is_constexpr:
            const_args.append(val)
            if major_version == 3 and 3 <= minor_version <= 6:
                k_args[p.name] = val
        elif p.do_not_specialize:
            dns_args.append(val)
            k_args[p.name] = val
        else:
            spec_args.append(val)
            k_args[p.name] = val

    entry_key = self.key(spec_args, dns_args, const_args)
    device = torch_device_fn.current_device()
    cache = self.kernel_cache[device]
    while entry_key not in cache:
        # NOTE: we serialize the first run of a jit function regardless of which device to run on
        # because Triton runtime is currently not threadsafe.
        with self.lock:
            if entry_key in cache:
                break
            kernel = self.fn.run(*args, **kwargs)
            fn = self.fn
            # collect constexpr arguments for grid computation
            constexprs = {}
            tune_constexprs = {}
            heur_constexprs = {}
            launch_pre_hooks = []
            while not isinstance(fn, triton.runtime.JITFunction):
                if isinstance(fn, triton.runtime.Autotuner):
                    config = fn.best_config
                    constexprs["num_warps"] = config.num_warps
                    constexprs["num_stages"] = config.num_stages
                    constexprs["num_ctas"] = config.num_ctas
                    constexprs = {**constexprs, **config.kwargs}
                    tune_constexprs = {**tune_constexprs, **config.kwargs}
                    if config.pre_hook is not None:
                        launch_pre_hooks.append(
                            (config.pre_hook, config.all_kwargs())
                        )
                elif isinstance(fn, triton.runtime.Heuristics):
                    for v, heur in fn.values.items():
                        heur_constexprs[v] = heur(
                            {
                                **dict(zip(fn.arg_names, args)),
                                **kwargs,
                                **constexprs,
                            }
                        )
                        constexprs[v] = heur_constexprs[v]
                else:
                    raise RuntimeError("Invalid Runtime Function")
                fn = fn.fn
            for p in self.jit_function.params:
                if (
                    p.is_constexpr
                    and p.name not in constexprs
                    and (p.default is not inspect._empty)
                ):
                    constexprs[p.name] = p.default
            cache[entry_key] = (
                kernel,
                constexprs,
                tune_constexprs,
                heur_constexprs,
                tuple(launch_pre_hooks),
            )
        return kernel, constexprs

    (
        kernel,
        constexprs,
        tune_constexprs,
        heur_constexprs,
        launch_pre_hooks,
    ) = cache[entry_key]

    if callable(grid):
        # collect all arguments to the grid fn，ie:
        # 1. args,
        # 2. kwargs,
        # 3. all all other captured arguments in CompiledKernel from Autotunner & Heuristics
        # when kwargs & captured args conflict, captured args have higher priority
        meta = {**dict(zip(self.arg_names, args)), **kwargs, **constexprs}
        grid = grid(meta)
    grid = grid + (1, 1)

    if launch_pre_hooks:
        hook_nargs = {**dict(zip(self.arg_names, args)), **kwargs}
        for pre_hook, hook_kwargs in launch_pre_hooks:
            pre_hook({**hook_nargs, **hook_kwargs})

    if major_version == 3 and 3 <= minor_version <= 6:
        all_args = []
        missing_keys = []
        for key in list(self.signature.parameters.keys()):
            if key in k_args:
                all_args.append(k_args[key])
            elif key in tune_constexprs:
                all_args.append(tune_constexprs[key])
            elif key in heur_constexprs:
                all_args.append(heur_constexprs[key])
            elif key in constexprs:
                all_args.append(constexprs[key])
            else:
                missing_keys.append(key)
            if len(missing_keys):
                raise RuntimeError(
                    f"[libentry]: probably a bug, the following kernel params where not captured: {missing_keys}"
                )
        kernel[grid[0:3]](*all_args)
    else:
        kernel[grid[0:3]](*k_args.values())
    return kernel, constexprs
'''

# the CO_FUTURE_* flags (__future__'s compiler_flag values, 3.8-3.13):
# how the module was compiled, not what the code does
_FUTURE = 0x1FE0000


def _diff(a, b, where, flags=_FUTURE):
    for f in ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
              "co_posonlyargcount", "co_kwonlyargcount", "co_exceptiontable"):
        if getattr(a, f, None) != getattr(b, f, None):
            return "%s: %s differs" % (where, f)
    if (a.co_flags & ~flags) != (b.co_flags & ~flags):
        return "%s: co_flags differ" % where
    if len(a.co_consts) != len(b.co_consts):
        return "%s: co_consts differ" % where
    for x, y in zip(a.co_consts, b.co_consts):
        if type(x) is not type(y):
            return "%s: co_consts differ" % where
        if type(x) is type(a):
            why = _diff(x, y, where + "." + x.co_name, flags)
            if why:
                return why
        elif x != y:
            return "%s: co_consts differ" % where
    return None


def getter(fn):
    code = getattr(fn, "__code__", None)
    if code is None or len(code.co_names) != 1 or code.co_varnames != ("self",):
        return None
    name = code.co_names[0]
    if not name.isidentifier():
        return None
    ns = {}
    exec(compile("def data_ptr(self):\n    return self.%s\n" % name, "<trlat getter reference>", "exec"), ns)
    # CO_NESTED (0x10): a method of a class defined inside a function, the same code
    return None if _diff(code, ns["data_ptr"].__code__, "data_ptr", _FUTURE | 0x10) else name


def check(run, key):
    ns = {}
    exec(compile(REFERENCE, "<trlat libentry reference>", "exec"), ns)
    for fn, name in ((run, "run"), (key, "key")):
        code = getattr(fn, "__code__", None)
        if code is None:
            return "LibEntry.%s is not a Python function" % name
        why = _diff(code, ns[name].__code__, "LibEntry." + name)
        if why:
            return why
    return None
