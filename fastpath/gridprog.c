/* Grid functions evaluated without calling them. jit.py run() calls a
 * callable grid with the bound arguments on every launch; Triton's
 * triton.cdiv alone (a ConstexprFunction building a list and a dict per
 * call) costs more than the rest of a hit. The first time a grid function's
 * code object is seen, fastpath/gridcheck.py (read from trlat's share
 * directory, as pyhook.py is) decides whether it is a pure function of
 * exact ints and, if so, returns a straight-line program over its closure
 * cells, meta[<str>] (the bound arguments) and module-level ints, with the
 * guards that keep that true (the globals, module attributes and closure
 * cells it called through, the called functions' code). A hit then
 * evaluates the program (gridop.c: Python's int semantics on int64)
 * instead of calling the grid; whenever the program cannot say (a value
 * that is not an exact int, a result outside int64, a division by zero, a
 * guard that no longer holds, another globals dict) the grid function is
 * called as before. Programs are kept per code object (at most GP_MAX,
 * never freed: a replaced one is retired, since a caller may still hold its
 * slot). TRLAT_FASTPATH=verify calls the grid as well and compares
 * (grid.c). Everything runs with the GIL held. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define GP_SLOTS 256 /* open addressing over code objects (a power of 2) */
#define GP_MAX 128   /* programs (accepted or rejected) kept */
#define GP_MAX_INSNS 256
#define GP_TRIES 4 /* analyses of one code object (a guard that broke: look again) */

enum { G_IS = 1, G_ABSENT = 2, G_CODE = 3, G_TYPE = 4, G_ATTR = 5, G_GETATTR = 6, G_DICTOF = 7, G_CELL = 8 };

struct gp_insn {
    int32_t op, a, b;
    int32_t meta; /* FP_G_META: the parameter index for meta_layout, -1: none */
    int64_t imm;
    PyObject *d, *name; /* borrowed from the analysis result */
};
struct gp_guard {
    int kind;
    Py_ssize_t idx; /* G_CELL: the closure index (a: the index as an int) */
    PyObject *a, *b, *c;
};
struct gp_prog {
    PyObject *res;     /* the analysis result (held): every object below is borrowed from it */
    PyObject *globals; /* the grid function's globals (held) */
    uint32_t n, nhit, nepoch, nout;
    uint16_t out[3];
    uint8_t tuple_out;       /* the grid function returns a tuple (not a list) */
    uint64_t meta_layout;    /* the layout the FP_G_META indexes are resolved for (0: none) */
    uint64_t epoch;          /* fpy.epoch when the epoch guards last held */
    struct gp_guard *guards; /* nhit checked on every hit, then nepoch checked when fpy.epoch moved */
    struct gp_insn insn[];
};
struct fp_gslot {
    PyObject *code;    /* held: the key */
    struct gp_prog *p; /* NULL: rejected (the grid is called) */
    uint8_t busy;      /* being analyzed (Python runs meanwhile) */
    uint8_t bad;       /* verify found it wrong */
    uint8_t tries;
};
static struct fp_gslot slots[GP_SLOTS];
static unsigned nslots;
static PyObject *analyze_fn, *analyze_launcher_fn;
static int loaded; /* 0 not yet, 1 loaded, -1 failed */

/* ---- loading gridcheck.py (sharepy.c) ---- */
static int load(void)
{
    if (loaded)
        return loaded > 0;
    loaded = -1;
    if (!PY(PyFunction_GetCode) || !PY(PyFunction_GetGlobals) || !PY(PyFunction_GetClosure) || !fpy.t_function ||
        !fpy.t_cell)
        return 0;
    char path[4200];
    static const char *const names[2] = {"analyze", "analyze_launcher"};
    PyObject *fns[2];
    int r = fp_share_load("gridcheck.py", "trlat_gridcheck", names, fns, 2, path, sizeof path);
    if (r) {
        trlat_log(r == -1 ? "fast path: cannot read %s; grid functions are called on every hit"
                          : "fast path: %s did not load; grid functions are called on every hit",
                  path);
        return 0;
    }
    analyze_fn = fns[0];
    analyze_launcher_fn = fns[1];
    loaded = 1;
    return 1;
}

/* ---- the analysis result -> a program ---- */
static PyObject *item(PyObject *t, Py_ssize_t i)
{
    return t && FP_TYPE(t) == fpy.t_tuple && i < PY(PyTuple_Size)(t) ? PY(PyTuple_GetItem)(t, i) : NULL;
}

static int small(PyObject *o, long lo, long hi, long *v)
{
    if (!o || FP_TYPE(o) != fpy.t_long)
        return -1;
    *v = PY(PyLong_AsLong)(o);
    if (*v == -1 && PY(PyErr_Occurred)()) {
        PY(PyErr_Clear)();
        return -1;
    }
    return *v >= lo && *v <= hi ? 0 : -1;
}

static int is_binary(long op)
{
    return op >= FP_G_ADD && op <= FP_G_MAX;
}

static struct gp_prog *build(PyObject *res, PyObject *globals)
{
    PyObject *insns = item(res, 0), *outs = item(res, 1), *guards = item(res, 2), *slow = item(res, 3);
    if (!insns || !outs || !guards || !slow || FP_TYPE(insns) != fpy.t_tuple || FP_TYPE(outs) != fpy.t_tuple ||
        FP_TYPE(guards) != fpy.t_tuple || FP_TYPE(slow) != fpy.t_tuple)
        return NULL;
    Py_ssize_t n = PY(PyTuple_Size)(insns), no = PY(PyTuple_Size)(outs), ng = PY(PyTuple_Size)(guards),
               ns = PY(PyTuple_Size)(slow);
    if (n < 1 || n > GP_MAX_INSNS || no < 1 || no > 3 || ng > 256 || ns > 16)
        return NULL;
    struct gp_prog *p = calloc(1, sizeof *p + (size_t)n * sizeof p->insn[0]);
    struct gp_guard *gd = calloc((size_t)(ng + ns) + 1, sizeof *gd);
    if (!p || !gd)
        goto bad;
    p->guards = gd;
    p->n = (uint32_t)n;
    p->nout = (uint32_t)no;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = item(insns, i), *a = item(t, 1), *b = item(t, 2);
        struct gp_insn *x = &p->insn[i];
        long op, v;
        if (small(item(t, 0), 1, 31, &op))
            goto bad;
        x->op = (int32_t)op;
        x->meta = -1;
        if (op == FP_G_CONST) {
            int ovf = 0;
            if (!a || FP_TYPE(a) != fpy.t_long)
                goto bad;
            x->imm = PY(PyLong_AsLongLongAndOverflow)(a, &ovf);
            if (ovf || PY(PyErr_Occurred)())
                goto bad;
        } else if (op == FP_G_CELL || op == FP_G_ARG) {
            if (small(a, 0, 1 << 20, &v))
                goto bad;
            x->a = (int32_t)v;
        } else if (op == FP_G_META) {
            if (!a || FP_TYPE(a) != fpy.t_str)
                goto bad;
            x->name = a;
        } else if (op == FP_G_GLOBAL) {
            if (!a || FP_TYPE(a) != fpy.t_dict || !b || FP_TYPE(b) != fpy.t_str)
                goto bad;
            x->d = a;
            x->name = b;
        } else if (is_binary(op) || op == FP_G_NEG || op == FP_G_INV) {
            long rb = 0, ra;
            if (small(a, 0, i - 1, &ra) || (is_binary(op) && small(b, 0, i - 1, &rb)))
                goto bad; /* operands come before */
            x->a = (int32_t)ra;
            x->b = (int32_t)rb;
        } else {
            goto bad;
        }
    }
    for (Py_ssize_t i = 0; i < no; i++) {
        long r;
        if (small(item(outs, i), 0, n - 1, &r))
            goto bad;
        p->out[i] = (uint16_t)r;
    }
    /* Guards on dicts other than the grid's module globals (the triton
     * module's, builtins) and on a class's method rarely change: with
     * watchers (3.12+) they are checked again only when fpy.epoch moves.
     * So is getattr(obj, name) when a dict watcher on obj's __dict__ and a
     * type watcher on its class see every change, and the hit checks that
     * obj's __dict__ is still that dict (assigning obj.__dict__ fires no
     * event). The grid's globals change whenever its module rebinds any
     * name (a loop variable at module level): watching them would move the
     * epoch all the time, so those are looked up on every hit, as are a
     * function's code, an object's type (no event) and what a closure cell
     * of the called grid function holds (a new function on every call). */
    uint32_t nhit = 0, nep = 0, nx = 0;
    struct gp_guard *ep = calloc((size_t)(ng + ns) + 1, sizeof *ep), *all = calloc((size_t)(ng + ns) + 1, sizeof *all);
    if (!ep || !all)
        goto bad_ep;
    for (Py_ssize_t i = 0; i < ng + ns; i++) {
        PyObject *t = i < ng ? item(guards, i) : item(slow, i - ng);
        long kind, idx = 0;
        if (small(item(t, 0), G_IS, G_CELL, &kind) || (i < ng) == (kind == G_ATTR))
            goto bad_ep;
        struct gp_guard x = {(int)kind, 0, item(t, 1), item(t, 2), item(t, 3)};
        if (!x.a || !x.b || !x.c)
            goto bad_ep;
        if (kind == G_CELL && small(x.a, 0, 1 << 20, &idx))
            goto bad_ep;
        x.idx = idx;
        if ((kind == G_IS || kind == G_ABSENT) && (FP_TYPE(x.a) != fpy.t_dict || FP_TYPE(x.b) != fpy.t_str))
            goto bad_ep;
        if (kind == G_CODE && FP_TYPE(x.a) != fpy.t_function)
            goto bad_ep;
        if ((kind == G_ATTR || kind == G_GETATTR) && FP_TYPE(x.b) != fpy.t_str)
            goto bad_ep;
        if (kind == G_DICTOF && FP_TYPE(x.b) != fpy.t_dict)
            goto bad_ep;
        if (kind == G_DICTOF) { /* usable: obj's dict and class watched, its dict readable */
            PyObject **dp = fpy.watchers && PY(_PyObject_GetDictPtr) ? PY(_PyObject_GetDictPtr)(x.a) : NULL;
            int ok = dp && *dp == x.b && PY(PyDict_Watch)(fpy.dict_wid, x.b) == 0 &&
                     PY(PyType_Watch)(fpy.type_wid, (PyObject *)FP_TYPE(x.a)) == 0;
            PY(PyErr_Clear)();
            if (!ok)
                continue; /* dropped: the getattr guard on obj stays on every hit */
        }
        all[nx++] = x;
    }
    for (uint32_t i = 0; i < nx; i++) {
        struct gp_guard x = all[i];
        int watched = 0;
        if (fpy.watchers && (x.kind == G_IS || x.kind == G_ABSENT) && x.a != globals) {
            watched = PY(PyDict_Watch)(fpy.dict_wid, x.a) == 0;
            if (!watched)
                PY(PyErr_Clear)();
        } else if (x.kind == G_ATTR) {
            fp_watch_type(x.a); /* without watchers: checked on every hit */
            watched = 1;
        } else if (x.kind == G_GETATTR) {
            for (uint32_t j = 0; j < nx && !watched; j++)
                watched = all[j].kind == G_DICTOF && all[j].a == x.a;
        }
        if (watched)
            ep[nep++] = x;
        else
            gd[nhit++] = x;
    }
    memcpy(gd + nhit, ep, nep * sizeof *ep);
    free(ep);
    free(all);
    p->nhit = nhit;
    p->nepoch = nep;
    PY(Py_IncRef)(res);
    PY(Py_IncRef)(globals);
    p->res = res;
    p->globals = globals;
    return p;
bad_ep:
    free(ep);
    free(all);
bad:
    PY(PyErr_Clear)();
    free(gd);
    free(p);
    return NULL;
}

static void describe(PyObject *code, char *buf, size_t len)
{
    PyObject *n = PY(PyObject_GetAttrString)(code, "co_name"), *f = PY(PyObject_GetAttrString)(code, "co_filename"),
             *l = PY(PyObject_GetAttrString)(code, "co_firstlineno");
    const char *ns = n && FP_TYPE(n) == fpy.t_str ? PY(PyUnicode_AsUTF8)(n) : NULL;
    const char *fs = f && FP_TYPE(f) == fpy.t_str ? PY(PyUnicode_AsUTF8)(f) : NULL;
    long line = l && FP_TYPE(l) == fpy.t_long ? PY(PyLong_AsLong)(l) : 0;
    snprintf(buf, len, "%s (%s:%ld)", ns ? ns : "?", fs ? fs : "?", line);
    PY(PyErr_Clear)();
    trlat_py_drop(n);
    trlat_py_drop(f);
    trlat_py_drop(l);
}

/* Runs the analysis for fn (whose code is s->code); sets s->p. */
static void analyze(struct fp_gslot *s, PyObject *fn)
{
    s->busy = 1;
    s->tries++;
    PyObject *res = PY(PyObject_Vectorcall)(analyze_fn, &fn, 1, NULL);
    struct gp_prog *p = NULL;
    const char *why = "the analysis raised";
    if (res && FP_TYPE(res) == fpy.t_str) {
        why = PY(PyUnicode_AsUTF8)(res);
    } else if (res) {
        p = build(res, PY(PyFunction_GetGlobals)(fn));
        if (p)
            p->tuple_out = item(res, 4) == fpy.o_true;
        why = "the analysis returned something unexpected";
    }
    PY(PyErr_Clear)();
    if (fp_conf.debug) {
        char d[512];
        describe(s->code, d, sizeof d);
        if (p)
            trlat_log_debug("fast path: grid function %s: evaluated without calling it (%u operations, %u guards)", d,
                            p->n, p->nhit + p->nepoch);
        else
            trlat_log_debug("fast path: grid function %s: called on every hit: %s", d, why ? why : "?");
    }
    trlat_py_drop(res);
    s->p = p; /* a program it replaces is retired, never freed: a caller may hold it */
    s->busy = 0;
}

static struct fp_gslot *slot_of(PyObject *code, PyObject *fn)
{
    uint64_t h = ((uint64_t)(uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ULL;
    for (unsigned i = 0, k = (unsigned)(h >> 56); i < GP_SLOTS; i++, k = (k + 1) & (GP_SLOTS - 1)) {
        struct fp_gslot *s = &slots[k];
        if (s->code == code)
            return s;
        if (s->code)
            continue;
        if (nslots >= GP_MAX || !load())
            return NULL; /* table full: grids of new code objects are called */
        nslots++;
        PY(Py_IncRef)(code);
        s->code = code;
        analyze(s, fn);
        return s;
    }
    return NULL;
}

/* ---- a hit ---- */
enum { GP_OK = 0, GP_CALL = 1, GP_STALE = 2 };

struct gp_cell { /* PyCellObject */
    struct trlat_pyhead head;
    PyObject *ref;
};

static int exact_int(PyObject *v, int64_t *out)
{
    if (!v || FP_TYPE(v) != fpy.t_long)
        return -1; /* bools, int subclasses, anything else: the grid decides */
    int ovf = 0;
    long long x = PY(PyLong_AsLongLongAndOverflow)(v, &ovf);
    if (ovf)
        return -1;
    *out = x;
    return 0;
}

static PyObject *dict_get(PyObject *d, PyObject *k)
{
    PyObject *v = PY(PyDict_GetItemWithError)(d, k);
    if (!v)
        PY(PyErr_Clear)();
    return v;
}

int fp_gprog_cell_is(PyObject *closure, Py_ssize_t idx, PyObject *want)
{
    if (!closure || FP_TYPE(closure) != fpy.t_tuple || idx < 0 || idx >= PY(PyTuple_Size)(closure))
        return 0;
    PyObject *v = PY(PyTuple_GetItem)(closure, idx);
    return v && FP_TYPE(v) == fpy.t_cell && ((struct gp_cell *)v)->ref == want;
}

static int guard_holds(const struct gp_guard *g, PyObject *closure)
{
    PyObject *v;
    switch (g->kind) {
    case G_IS:
        return dict_get(g->a, g->b) == g->c;
    case G_ABSENT:
        return dict_get(g->a, g->b) == NULL;
    case G_CODE:
        return PY(PyFunction_GetCode)(g->a) == g->b;
    case G_TYPE:
        return FP_TYPE(g->a) == (void *)g->b;
    case G_DICTOF: {
        PyObject **dp = PY(_PyObject_GetDictPtr)(g->a);
        return dp && *dp == g->b;
    }
    case G_CELL:
        return fp_gprog_cell_is(closure, g->idx, g->b);
    case G_ATTR:
    case G_GETATTR:
        v = fp_getattr(g->a, g->b);
        trlat_py_drop(v);
        return v == g->c;
    default:
        return 0;
    }
}

static int guards_hold(struct gp_prog *p, PyObject *closure)
{
    for (uint32_t i = 0; i < p->nhit; i++)
        if (!guard_holds(&p->guards[i], closure))
            return 0;
    if (p->nepoch && (!fpy.watchers || p->epoch != fpy.epoch)) {
        for (uint32_t i = p->nhit; i < p->nhit + p->nepoch; i++)
            if (!guard_holds(&p->guards[i], closure))
                return 0;
        p->epoch = fpy.epoch;
    }
    return 1;
}

static void resolve_meta(struct gp_prog *p, const struct fp_layout *L)
{
    for (uint32_t i = 0; i < p->n; i++) {
        struct gp_insn *x = &p->insn[i];
        if (x->op != FP_G_META)
            continue;
        x->meta = -1;
        for (unsigned j = 0; j < L->n && x->meta < 0; j++) {
            PyObject *nm = L->p[j].name;
            if (nm == x->name) {
                x->meta = (int32_t)j;
            } else {
                int r = PY(PyUnicode_Compare)(nm, x->name);
                if (r == -1 && PY(PyErr_Occurred)())
                    PY(PyErr_Clear)();
                if (r == 0)
                    x->meta = (int32_t)j;
            }
        }
    }
    p->meta_layout = L->id;
}

/* Evaluates p for a call of fn: meta[name] the value of L's parameter of
 * that name in vals (a grid function's meta, NULL: not in it), or
 * args[0..nargs) (a launcher's positional arguments, L NULL). */
static int run(struct gp_prog *p, const struct fp_layout *L, PyObject *const *vals, PyObject *const *args,
               Py_ssize_t nargs, PyObject *fn, unsigned g[3])
{
    if (PY(PyFunction_GetGlobals)(fn) != p->globals)
        return GP_CALL; /* the same code run in another module's globals */
    PyObject *closure = PY(PyFunction_GetClosure)(fn);
    if (!guards_hold(p, closure))
        return GP_STALE; /* a cell holding another module or function: analysed again too */
    if (L && p->meta_layout != L->id)
        resolve_meta(p, L);
    Py_ssize_t ncl = closure && FP_TYPE(closure) == fpy.t_tuple ? PY(PyTuple_Size)(closure) : 0;
    int64_t R[GP_MAX_INSNS];
    for (uint32_t i = 0; i < p->n; i++) {
        const struct gp_insn *x = &p->insn[i];
        PyObject *v;
        switch (x->op) {
        case FP_G_CONST:
            R[i] = x->imm;
            break;
        case FP_G_CELL:
            if (x->a >= ncl)
                return GP_CALL;
            v = PY(PyTuple_GetItem)(closure, x->a);
            if (!v || FP_TYPE(v) != fpy.t_cell || exact_int(((struct gp_cell *)v)->ref, &R[i]))
                return GP_CALL; /* an empty cell raises NameError: the grid will */
            break;
        case FP_G_META:
            if (!L || x->meta < 0 || exact_int(vals[x->meta], &R[i]))
                return GP_CALL; /* KeyError, or not an exact int */
            break;
        case FP_G_ARG:
            if (x->a >= nargs || exact_int(args[x->a], &R[i]))
                return GP_CALL;
            break;
        case FP_G_GLOBAL:
            if (exact_int(dict_get(x->d, x->name), &R[i]))
                return GP_CALL;
            break;
        default:
            if (fp_gop_eval(x->op, R[x->a], R[x->b], &R[i]))
                return GP_CALL;
        }
    }
    /* grid.c's rules: 1-3 non-negative ints whose product fits an int */
    int64_t prod = 1;
    for (unsigned i = 0; i < 3; i++) {
        int64_t v = i < p->nout ? R[p->out[i]] : 1;
        if (v < 0 || v > INT_MAX || (prod *= v) > INT_MAX)
            return GP_CALL; /* the grid's result goes to Triton */
        g[i] = (unsigned)v;
    }
    if (fp_conf.grid == TRLAT_FP_GRID_SKEW && ((int64_t)g[0] + 1) * g[1] * g[2] <= INT_MAX)
        g[0]++; /* tests only: a wrong program, for verify mode to find */
    return GP_OK;
}

int fp_gprog_eval_meta(const struct fp_layout *L, PyObject *const *vals, PyObject *fn, unsigned g[3], int *tuple,
                       struct fp_gslot **slot)
{
    *slot = NULL;
    if (fp_conf.grid == TRLAT_FP_GRID_CALL || loaded < 0 || !PY(PyFunction_GetCode))
        return -1;
    PyObject *code = PY(PyFunction_GetCode)(fn);
    struct fp_gslot *s = code ? slot_of(code, fn) : NULL;
    if (!s || s->busy || s->bad || !s->p)
        return -1;
    int r = run(s->p, L, vals, NULL, 0, fn, g);
    if (r == GP_STALE && s->tries < GP_TRIES) { /* a global rebound, a function's code replaced: look again */
        analyze(s, fn);
        r = s->p ? run(s->p, L, vals, NULL, 0, fn, g) : GP_CALL;
    }
    if (r != GP_OK)
        return -1;
    if (tuple)
        *tuple = s->p->tuple_out;
    *slot = s;
    return 0;
}

int fp_gprog_eval(struct fp_call *c, PyObject *fn, unsigned g[3], struct fp_gslot **slot)
{
    return fp_gprog_eval_meta(c->L, c->vals, fn, g, NULL, slot);
}

void fp_gprog_mismatch(struct fp_gslot *s, const char *kernel, const unsigned g[3], PyObject *result)
{
    if (s->bad)
        return;
    s->bad = 1;
    PyObject *et, *ev, *etb; /* the grid's error, if it raised, is the call's */
    PY(PyErr_Fetch)(&et, &ev, &etb);
    char d[512], got[128] = "raised";
    describe(s->code, d, sizeof d);
    if (result) {
        PyObject *str = PY(PyObject_Str)(result);
        const char *t = str ? PY(PyUnicode_AsUTF8)(str) : NULL;
        snprintf(got, sizeof got, "returned %.100s", t ? t : "?");
        trlat_py_drop(str);
        PY(PyErr_Clear)();
    }
    trlat_log("fast path verify: %s: the grid computed from grid function %s is (%u, %u, %u) but the function %s; "
              "it is called from now on",
              kernel ? kernel : "?", d, g[0], g[1], g[2], got);
    PY(PyErr_Restore)(et, ev, etb);
}

/* ---- Inductor's launchers (inductor.c) ---- */
struct gp_prog *fp_gprog_launcher(PyObject *fn, PyObject **call, const char **why)
{
    *call = NULL;
    *why = "gridcheck.py did not load";
    if (!PY(PyFunction_GetGlobals) || !load())
        return NULL;
    PyObject *res = PY(PyObject_Vectorcall)(analyze_launcher_fn, &fn, 1, NULL);
    struct gp_prog *p = NULL;
    static char reason[160];
    *why = "the analysis raised";
    if (res && FP_TYPE(res) == fpy.t_str) {
        const char *t = PY(PyUnicode_AsUTF8)(res);
        snprintf(reason, sizeof reason, "%s", t ? t : "?");
        *why = reason;
    } else if (res && (p = build(res, NULL))) {     /* NULL: every dict it guards may be watched */
        p->globals = PY(PyFunction_GetGlobals)(fn); /* build held NULL */
        PY(Py_IncRef)(p->globals);
        *call = item(res, 4);
        *why = NULL;
    } else if (res) {
        *why = "the analysis returned something unexpected";
    }
    PY(PyErr_Clear)();
    trlat_py_drop(res); /* p->res holds it */
    return p;
}

int fp_gprog_run_args(struct gp_prog *p, PyObject *fn, PyObject *const *args, Py_ssize_t nargs, unsigned g[3])
{
    return run(p, NULL, NULL, args, nargs, fn, g) == GP_OK ? 0 : -1;
}
