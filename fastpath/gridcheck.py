# trlat's grid analysis (TRLAT_FASTPATH, fastpath/gridprog.c): read once per
# code object of a grid function, it decides whether `grid(meta)` is a pure
# function of exact ints (the grid's closure cells, meta[<str>], module-level
# ints) through + - * // % & | ^ << >> unary - ~, min/max, triton.cdiv,
# triton.next_power_of_2 and plain Python functions made of the same (named
# by globals, module attributes, or closure cells holding the module or the
# function, each guarded on every hit to be the same object), and returns
# it as a straight-line program the C side evaluates on a hit instead of
# calling the grid. Anything else (a jump, an attribute of a value other
# than a module, a method call, a float, a keyword argument, a store
# outside the function's locals) rejects the grid: it is then called as
# Triton would. Nothing here runs the program's code or any user code: the
# objects it looks at are read through exact types and real dicts.
#
# analyze(fn) -> a reason (str) or (insns, outs, guards, slow_guards, tuple):
#   insns: one tuple per register, in order:
#     (OP_CONST, int, 0)  (OP_CELL, closure index, 0)  (OP_META, name, 0)
#     (OP_GLOBAL, dict, name): dict[name] read on every hit, an exact int
#     (OP_ARG, index, 0): positional argument `index` (analyze_launcher)
#     (op, register a, register b) for the binary operators below,
#     (OP_NEG | OP_INV, register, 0)
#   outs: 1 to 3 registers, the grid's items
#   tuple: True when the grid is a tuple, False a list (a caller that
#     concatenates it with a tuple, as FlagGems' LibEntry.run does, raises on a list)
#   guards (checked on every hit, any failure calls the grid):
#     (G_IS, dict, name, obj): dict[name] is obj
#     (G_ABSENT, dict, name, None): name not in dict
#     (G_CODE, function, code, None): function.__code__ is code
#     (G_TYPE, obj, type, None): type(obj) is type
#     (G_GETATTR, obj, name, value): getattr(obj, name) is value
#     (G_DICTOF, obj, dict, None): obj.__dict__ is dict (lets the C side
#       watch that dict instead of reading the attribute on every hit)
#     (G_CELL, closure index, obj, None): the called grid function's
#       __closure__[index].cell_contents is obj (a module, a function, a
#       ConstexprFunction, min or max held by a closure cell)
#   slow_guards (checked when a watched type changed, or always without
#   watchers): (G_ATTR, type, name, value): getattr(type, name) is value
import sys
import types

import dis

OP_CONST, OP_CELL, OP_META, OP_GLOBAL, OP_ARG = 1, 2, 3, 4, 5
OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_MOD, OP_AND, OP_OR, OP_XOR, OP_LSHIFT, OP_RSHIFT, OP_MIN, OP_MAX = range(10, 22)
OP_NEG, OP_INV = 30, 31
G_IS, G_ABSENT, G_CODE, G_TYPE, G_ATTR, G_GETATTR, G_DICTOF, G_CELL = 1, 2, 3, 4, 5, 6, 7, 8

_BINARY = {"+": OP_ADD, "-": OP_SUB, "*": OP_MUL, "//": OP_FLOORDIV, "%": OP_MOD, "&": OP_AND, "|": OP_OR,
           "^": OP_XOR, "<<": OP_LSHIFT, ">>": OP_RSHIFT}
_LEGACY = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "FLOOR_DIVIDE": "//", "MODULO": "%", "AND": "&", "OR": "|",
           "XOR": "^", "LSHIFT": "<<", "RSHIFT": ">>"}
for _k, _v in list(_LEGACY.items()):
    _LEGACY["BINARY_" + _k] = _v
    _LEGACY["INPLACE_" + _k] = _v
_SKIP = {"RESUME", "NOP", "CACHE", "EXTENDED_ARG", "PRECALL", "COPY_FREE_VARS", "NOT_TAKEN"}
_BAD_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # *args, **kw, generator, coroutine, iterable coroutine, async gen
_I64 = (-(1 << 63), (1 << 63) - 1)
_PY = sys.version_info[:2]
_MAX_STEPS, _MAX_DEPTH, _MAX_INSNS = 512, 4, 256


class Reject(Exception):
    pass


_NULL = object()   # the NULL a call sequence pushes
_META = object()   # the grid's parameter


class _Reg:
    __slots__ = ("i", )

    def __init__(self, i):
        self.i = i


class _Obj:
    __slots__ = ("v", )

    def __init__(self, v):
        self.v = v


class _Str:
    __slots__ = ("s", )

    def __init__(self, s):
        self.s = s


class _Param:
    """A launcher's positional parameter, as passed (analyze_launcher)."""
    __slots__ = ("i", )

    def __init__(self, i):
        self.i = i


class _Result:
    """What the launcher's one runner call returned (popped, never used)."""


class _LaunchMeta:
    """bin.launch_metadata: the method, then what its call returned."""
    __slots__ = ("called", )

    def __init__(self):
        self.called = False


# CompiledKernel.launch_metadata of Triton 3.x reads only these names: with a
# launch hook set it builds a LazyDict of the kernel's name and function and
# the arguments, and calls nothing (its _init_handles returns at once once
# the kernel is loaded); the result goes to the launcher's hooks alone.
_LAUNCH_METADATA_NAMES = frozenset(("knobs", "runtime", "launch_enter_hook", "CompiledKernel", "_init_handles",
                                    "LazyDict", "name", "function", "isinstance", "src", "ASTSource", "fn",
                                    "launch_metadata", "zip", "arg_names", "add", "metadata", "enumerate",
                                    "constexprs", "constants"))


class _Items:
    __slots__ = ("regs", "tuple")

    def __init__(self, regs, is_tuple=True):
        self.regs = regs
        self.tuple = is_tuple


class _Prog:

    def __init__(self, fn):
        self.insns, self.guards, self.slow = [], [], []
        self.fn = fn
        self.cells = {}
        self.consts = {}
        self.steps = 0
        self.params = None  # analyze_launcher: name -> positional index
        self.args = {}
        self.call = None

    def int_of(self, v):
        """A launcher parameter used as an int: its register."""
        if isinstance(v, _Param):
            if v.i not in self.args:
                self.args[v.i] = self.add((OP_ARG, v.i, 0))
            return self.args[v.i]
        return v

    def add(self, insn):
        if len(self.insns) >= _MAX_INSNS:
            raise Reject("too long")
        self.insns.append(insn)
        return _Reg(len(self.insns) - 1)

    def const(self, v):
        if type(v) is not int or not _I64[0] <= v <= _I64[1]:
            raise Reject("a constant that is not a 64-bit int")
        if v not in self.consts:
            self.consts[v] = self.add((OP_CONST, v, 0))
        return self.consts[v]


def _builtins_of(prog, g):
    b = g.get("__builtins__", None) if type(g) is dict else None
    if b is None:
        raise Reject("no __builtins__ in the globals")
    prog.guards.append((G_IS, g, "__builtins__", b))
    if type(b) is types.ModuleType:
        b = b.__dict__
    if type(b) is not dict:
        raise Reject("__builtins__ is not a dict")
    return b


def _global(prog, g, name):
    if type(g) is not dict:
        raise Reject("globals are not a dict")
    if name in g:
        v = g[name]
        if type(v) is int and prog.params is None:
            return prog.add((OP_GLOBAL, g, name))  # read on every hit
        prog.guards.append((G_IS, g, name, v))
        return _Obj(v)
    prog.guards.append((G_ABSENT, g, name, None))
    b = _builtins_of(prog, g)
    if name not in b:
        raise Reject("global %s not found" % name)
    prog.guards.append((G_IS, b, name, b[name]))
    return _Obj(b[name])


def _constexpr_function_class():
    jit = sys.modules.get("triton.runtime.jit")
    d = getattr(jit, "__dict__", None) if type(jit) is types.ModuleType else None
    return d.get("ConstexprFunction") if type(d) is dict else None


def _cell(prog, fn, i):
    """The grid's closure cell i: an int register read on every hit, or the
    object it holds (a module, a function, a ConstexprFunction, min/max:
    what an attribute or a call accepts) guarded on every hit to be still
    that object in the cell of the function being called (a new function
    object on every call: its cells, not these)."""
    import builtins
    cl = fn.__closure__
    if type(cl) is not tuple or not 0 <= i < len(cl) or type(cl[i]) is not types.CellType:
        raise Reject("a closure that is not a tuple of cells")
    try:
        v = cl[i].cell_contents
    except ValueError:  # empty: the int read finds no int, the grid raises NameError
        v = None
    cf = _constexpr_function_class()
    if (type(v) is types.ModuleType or type(v) is types.FunctionType or (cf is not None and type(v) is cf)
            or v is builtins.min or v is builtins.max):
        prog.guards.append((G_CELL, i, v, None))
        return _Obj(v)
    return prog.add((OP_CELL, i, 0))


def _call(prog, callee, args, depth):
    import builtins
    regs = []
    for a in args:
        a = prog.int_of(a)
        if not isinstance(a, _Reg):
            raise Reject("a call argument that is not an int")
        regs.append(a)
    if callee is builtins.min or callee is builtins.max:
        if len(regs) < 2:
            raise Reject("min/max of fewer than 2 ints")
        op = OP_MIN if callee is builtins.min else OP_MAX
        r = regs[0]
        for x in regs[1:]:
            r = prog.add((op, r.i, x.i))
        return r
    cf = _constexpr_function_class()
    fn = callee
    if cf is not None and type(callee) is cf:
        # ConstexprFunction.__call__ (jit.py): host calls unwrap constexprs
        # (ints are not) and return self.fn(*args) when _semantic is None
        d = getattr(callee, "__dict__", None)
        fn = d.get("fn") if type(d) is dict else None
        call = cf.__dict__.get("__call__")
        if (type(fn) is not types.FunctionType or type(call) is not types.FunctionType
                or cf.__getattribute__ is not object.__getattribute__ or any("fn" in k.__dict__ for k in cf.__mro__)):
            raise Reject("a ConstexprFunction not as expected")
        prog.guards.append((G_TYPE, callee, cf, None))
        prog.guards.append((G_GETATTR, callee, "fn", fn))  # self.fn, as __call__ reads it
        prog.guards.append((G_DICTOF, callee, d, None))
        prog.slow.append((G_ATTR, cf, "__call__", call))
    if type(fn) is not types.FunctionType:
        raise Reject("a call of %s" % type(fn).__name__)
    code = fn.__code__
    if (code.co_flags & _BAD_FLAGS or code.co_kwonlyargcount or code.co_argcount != len(regs) or code.co_freevars
            or code.co_cellvars):
        raise Reject("a call of %s, which is not a plain function of its positional arguments" % fn.__name__)
    prog.guards.append((G_CODE, fn, code, None))
    env = dict(zip(code.co_varnames, regs))
    r = _run(prog, fn, code, env, None, depth + 1)
    if not isinstance(r, _Reg):
        raise Reject("%s does not return an int" % fn.__name__)
    return r


def _run(prog, fn, code, env, meta_name, depth):
    """Symbolic execution of straight-line code; returns what it returns."""
    if depth > _MAX_DEPTH:
        raise Reject("calls nested too deep")
    g = fn.__globals__
    stack = []

    def pop():
        if not stack:
            raise Reject("stack")
        return stack.pop()

    def load_fast(name):
        if name == meta_name:
            return _META
        if name not in env:
            if prog.params is not None and fn is prog.fn and name in prog.params:
                return _Param(prog.params[name])
            raise Reject("unbound local %s" % name)
        return env[name]

    def store_fast(name, v):
        nonlocal meta_name
        v = prog.int_of(v)
        if prog.params is not None and fn is prog.fn and name in prog.params:
            raise Reject("a parameter assigned")
        if not isinstance(v, _Reg):
            raise Reject("a local that is not an int")
        if name == meta_name:
            meta_name = None
        env[name] = v

    for ins in dis.get_instructions(code):
        prog.steps += 1
        if prog.steps > _MAX_STEPS:
            raise Reject("too long")
        op, arg, val = ins.opname, ins.arg, ins.argval
        if op in _SKIP:
            continue
        if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"):
            stack.append(load_fast(val))
        elif op in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            stack.append(load_fast(val[0]))
            stack.append(load_fast(val[1]))
        elif op == "STORE_FAST":
            store_fast(val, pop())
        elif op == "STORE_FAST_LOAD_FAST":
            store_fast(val[0], pop())
            stack.append(load_fast(val[1]))
        elif op in ("LOAD_CONST", "LOAD_SMALL_INT", "RETURN_CONST"):
            if type(val) is str:
                v = _Str(val)
            elif prog.params is not None and (val is None or type(val) is float or type(val) is bool):
                v = _Obj(val)  # a launcher's literal argument
            elif type(val) is tuple:
                v = _Items([prog.const(x) for x in val])
            else:
                v = prog.const(val)
            if op != "RETURN_CONST":
                stack.append(v)
                continue
            return v
        elif op == "LOAD_DEREF":
            if fn is not prog.fn or val not in code.co_freevars or val in code.co_cellvars:
                raise Reject("a cell variable")
            i = code.co_freevars.index(val)
            if i not in prog.cells:
                prog.cells[i] = _cell(prog, fn, i)
            stack.append(prog.cells[i])
        elif op == "LOAD_GLOBAL":
            v = _global(prog, g, val)
            if _PY >= (3, 11) and arg & 1:
                stack.append(_NULL)
            stack.append(v)
        elif op in ("LOAD_ATTR", "LOAD_METHOD"):
            o = pop()
            if (prog.params is not None and fn is prog.fn and val == "launch_metadata" and isinstance(o, _Obj)
                    and (op == "LOAD_METHOD" or (_PY >= (3, 12) and arg & 1))):
                _launch_metadata(prog, o.v)
                stack.append(_NULL)
                stack.append(_LaunchMeta())
                continue
            if not isinstance(o, _Obj) or type(o.v) is not types.ModuleType:
                raise Reject("an attribute of something other than a module")
            prog.guards.append((G_TYPE, o.v, types.ModuleType, None))  # a module's __class__ can be replaced
            d = o.v.__dict__
            if type(d) is not dict or val not in d:
                raise Reject("module attribute %s" % val)
            if type(d[val]) is int:  # an int module attribute: read on every hit
                if op == "LOAD_METHOD" or (_PY >= (3, 12) and arg & 1):
                    raise Reject("a call of an int")
                stack.append(prog.add((OP_GLOBAL, d, val)))
                continue
            prog.guards.append((G_IS, d, val, d[val]))
            if op == "LOAD_METHOD" or (_PY >= (3, 12) and arg & 1):
                stack.append(_NULL)
            stack.append(_Obj(d[val]))
        elif op == "PUSH_NULL":
            stack.append(_NULL)
        elif op in ("CALL", "CALL_FUNCTION", "CALL_METHOD"):
            args = [pop() for _ in range(arg)][::-1]
            a = pop()
            if op == "CALL_FUNCTION":
                callee = a
            else:
                b = pop()
                if a is _NULL:
                    callee = b
                elif b is _NULL:
                    callee = a
                else:
                    raise Reject("a method call")
            if isinstance(callee, _LaunchMeta) and not callee.called:
                if not all(isinstance(x, (_Param, _Reg, _Items, _Obj, _Str)) for x in args):
                    raise Reject("launch_metadata of computed values")
                callee.called = True
                stack.append(callee)
                continue
            if not isinstance(callee, _Obj):
                raise Reject("a call of a computed value")
            if prog.params is not None and fn is prog.fn and _is_runner(callee.v):
                if prog.call is not None:
                    raise Reject("two runner calls")
                prog.call = (callee.v, args)
                stack.append(_Result())
                continue
            stack.append(_call(prog, callee.v, args, depth))
        elif op == "BINARY_SUBSCR" or (op == "BINARY_OP" and ins.argrepr == "[]"):
            k, o = pop(), pop()
            if o is not _META or not isinstance(k, _Str):
                raise Reject("a subscript other than meta[<str>]")
            stack.append(prog.add((OP_META, k.s, 0)))
        elif op == "BINARY_OP" or op in _LEGACY:
            sym = ins.argrepr.rstrip("=") if op == "BINARY_OP" else _LEGACY[op]
            if sym not in _BINARY:
                raise Reject("operator %s" % (ins.argrepr or op))
            b, a = prog.int_of(pop()), prog.int_of(pop())
            if not isinstance(a, _Reg) or not isinstance(b, _Reg):
                raise Reject("an operator on something other than ints")
            stack.append(prog.add((_BINARY[sym], a.i, b.i)))
        elif op in ("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE"):
            a = prog.int_of(pop())
            if not isinstance(a, _Reg):
                raise Reject("an operator on something other than ints")
            stack.append(a if op == "UNARY_POSITIVE" else prog.add((OP_NEG if op == "UNARY_NEGATIVE" else OP_INV,
                                                                    a.i, 0)))
        elif op == "CALL_INTRINSIC_1" and ins.argrepr == "INTRINSIC_UNARY_POSITIVE":  # 3.12+: +x
            a = prog.int_of(pop())
            if not isinstance(a, _Reg):
                raise Reject("an operator on something other than ints")
            stack.append(a)
        elif op in ("BUILD_TUPLE", "BUILD_LIST"):
            items = [pop() for _ in range(arg)][::-1]
            if not all(isinstance(x, _Reg) for x in items):
                raise Reject("a sequence of something other than ints")
            stack.append(_Items(items, op == "BUILD_TUPLE"))
        elif op == "POP_TOP" and prog.params is not None and fn is prog.fn:
            if not isinstance(pop(), _Result):
                raise Reject("a value computed and dropped")
        elif op == "RETURN_VALUE":
            return pop()
        else:
            raise Reject("bytecode %s" % op)
    raise Reject("no return")


def analyze(fn):
    try:
        if type(fn) is not types.FunctionType:
            return "not a Python function"
        code = fn.__code__
        if code.co_flags & _BAD_FLAGS or code.co_argcount != 1 or code.co_kwonlyargcount or code.co_cellvars:
            return "not a function of one argument"
        prog = _Prog(fn)
        r = _run(prog, fn, code, {}, code.co_varnames[0], 0)
        if not isinstance(r, _Items) or not 1 <= len(r.regs) <= 3:
            return "does not return 1 to 3 ints"
        return (tuple(prog.insns), tuple(x.i for x in r.regs), tuple(prog.guards), tuple(prog.slow), r.tuple)
    except Reject as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 (never let the analysis raise into a launch)
        return "analysis failed: %s: %s" % (type(e).__name__, e)


def _is_runner(v):
    """What a launcher may call as its runner: an object, not a function
    the analysis would run through (a CudaLauncher, a bound method)."""
    import builtins
    cf = _constexpr_function_class()
    return (type(v) is not types.FunctionType and v is not builtins.min and v is not builtins.max
            and (cf is None or type(v) is not cf))


def _launch_metadata(prog, b):
    """Guards bin.launch_metadata to stay the method modelled, of a loaded
    kernel (its module the same object, so _init_handles does nothing)."""
    mod = sys.modules.get("triton.compiler.compiler")
    d = getattr(mod, "__dict__", None) if type(mod) is types.ModuleType else None
    ck = d.get("CompiledKernel") if type(d) is dict else None
    if type(ck) is not type or type(b) is not ck:
        raise Reject("launch_metadata of something other than a CompiledKernel")
    m = ck.__dict__.get("launch_metadata")
    bd = getattr(b, "__dict__", None)
    if (type(m) is not types.FunctionType or not set(m.__code__.co_names) <= _LAUNCH_METADATA_NAMES
            or ck.__getattribute__ is not object.__getattribute__ or any("launch_metadata" in k.__dict__
                                                                          for k in ck.__mro__[1:])):
        raise Reject("a CompiledKernel.launch_metadata not as modelled")
    if type(bd) is not dict or "launch_metadata" in bd or bd.get("module") is None:
        raise Reject("launch_metadata of a kernel not loaded, or its own")
    prog.guards.append((G_TYPE, b, ck, None))
    prog.guards.append((G_DICTOF, b, bd, None))
    prog.guards.append((G_ABSENT, bd, "launch_metadata", None))
    prog.guards.append((G_IS, bd, "module", bd["module"]))
    prog.guards.append((G_CODE, m, m.__code__, None))
    prog.slow.append((G_ATTR, ck, "launch_metadata", m))


def analyze_launcher(fn):
    """Inductor's generated launcher (CompileResult._gen_launcher_code):
    def launcher(<args>, stream): <grid lines>; runner(grid_0, grid_1,
    grid_2, stream, <the rest>). Returns a reason (str) or (insns, outs,
    guards, slow_guards, (runner, spec, argcount)): outs the grid's three
    registers, spec what each runner argument after the stream is, as
    (0, parameter index) passed through, (1, object) the same on every
    call (a literal, or a global of the launcher's guarded to stay it), or
    (2, None): what bin.launch_metadata(...) returned, which only the
    launch hooks read (Inductor emits the call whenever a hook object is
    set, as Triton 3.6's idle HookChain is). Ints computed from the parameters go only into the grid."""
    try:
        if type(fn) is not types.FunctionType:
            return "not a Python function"
        code = fn.__code__
        n = code.co_argcount
        if (code.co_flags & _BAD_FLAGS or code.co_kwonlyargcount or code.co_cellvars or code.co_freevars
                or getattr(code, "co_posonlyargcount", 0) or n < 1 or code.co_varnames[n - 1] != "stream"):
            return "not def launcher(<args>, stream)"
        prog = _Prog(fn)
        prog.params = {name: i for i, name in enumerate(code.co_varnames[:n])}
        r = _run(prog, fn, code, {}, None, 0)
        if not isinstance(r, _Obj) or r.v is not None or prog.call is None:
            return "does not return None after one runner call"
        runner, args = prog.call
        if len(args) < 4:
            raise Reject("a runner call of fewer than 4 arguments")
        outs = []
        for a in args[:3]:
            a = prog.int_of(a)
            if not isinstance(a, _Reg):
                raise Reject("a grid that is not an int")
            outs.append(a.i)
        if not isinstance(args[3], _Param) or args[3].i != n - 1:
            raise Reject("the runner's fourth argument is not the stream")
        consts = {r.i: v for v, r in prog.consts.items()}
        spec = []
        for a in args[4:]:
            if isinstance(a, _Param):
                spec.append((0, a.i))
            elif isinstance(a, _LaunchMeta) and a.called:
                spec.append((2, None))
            elif isinstance(a, _Obj):
                spec.append((1, a.v))
            elif isinstance(a, _Str):
                spec.append((1, a.s))
            elif isinstance(a, _Reg) and a.i in consts:
                spec.append((1, consts[a.i]))
            else:
                raise Reject("a runner argument computed from the parameters")
        return (tuple(prog.insns), tuple(outs), tuple(prog.guards), tuple(prog.slow), (runner, tuple(spec), n))
    except Reject as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 (never let the analysis raise into a launch)
        return "analysis failed: %s: %s" % (type(e).__name__, e)
