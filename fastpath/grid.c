/* The grid as JITFunction.run canonicalizes it (jit.py): `if
 * callable(grid): grid = grid(bound_args)`, then grid_0 = grid[0], grid_1 =
 * grid[1] if len > 1 else 1, grid_2 likewise; the launcher parses them as C
 * ints and launches only when gridX*gridY*gridZ > 0 (driver.py _launch).
 * The fast path launches plain non-negative ints whose product fits an int;
 * anything else is left to Triton. */
#include "fastpath/fp_py.h"

#include <limits.h>

static int parse(PyObject *seq, unsigned g[3])
{
    void *t = FP_TYPE(seq);
    if (t != fpy.t_tuple && t != fpy.t_list)
        return -1;
    Py_ssize_t n = t == fpy.t_tuple ? fp_tuple_len(seq) : PY(PyList_Size)(seq);
    if (n < 1 || n > 3)
        return -1;
    int64_t prod = 1;
    for (Py_ssize_t i = 0; i < 3; i++) {
        long long v = 1;
        if (i < n) {
            PyObject *o = t == fpy.t_tuple ? fp_tuple_get(seq, i) : PY(PyList_GetItem)(seq, i);
            if (!o || FP_TYPE(o) != fpy.t_long)
                return -1;
            int ovf = 0;
            if (!fp_small_int(o, &v))
                v = PY(PyLong_AsLongLongAndOverflow)(o, &ovf);
            if (ovf || v < 0 || v > INT_MAX) {
                PY(PyErr_Clear)();
                return -1;
            }
        }
        g[i] = (unsigned)v;
        prod *= v;
        if (prod > INT_MAX)
            return -1;
    }
    return 0;
}

int fp_grid_eval(struct fp_call *c, PyObject *bound, unsigned g[3], PyObject **result)
{
    *result = NULL;
    PyObject *grid = c->grid;
    if (!grid)
        return FP_GRID_NO;
    void *t = FP_TYPE(grid);
    if (t == fpy.t_tuple || t == fpy.t_list)
        return parse(grid, g) ? FP_GRID_NO : FP_GRID_OK;
    unsigned pg[3];
    struct fp_gslot *gs = NULL;
    if (t == fpy.t_function && fp_gprog_eval(c, grid, pg, &gs) == 0 && !fp_conf.verify) {
        memcpy(g, pg, sizeof pg); /* the grid function's result, without calling it (gridprog.c) */
        return FP_GRID_OK;
    }
    if (t != fpy.t_function && !PY(PyCallable_Check)(grid))
        return FP_GRID_NO;
    PyObject *b = bound;
    if (!b && !(b = fp_call_bound_dict(c))) {
        PY(PyErr_Clear)();
        return FP_GRID_NO;
    }
    PyObject *r = PY(PyObject_Vectorcall)(grid, &b, 1, NULL);
    if (b != bound)
        PY(Py_DecRef)(b);
    if (!r) {
        if (gs) /* verify: the program had a grid where the function raised */
            fp_gprog_mismatch(gs, c->L && c->L->stat ? c->L->stat->name : NULL, pg, NULL);
        return FP_GRID_RAISED;
    }
    int odd = parse(r, g);
    if (gs && (odd || memcmp(g, pg, sizeof pg) != 0)) { /* verify: the program is wrong */
        fp_gprog_mismatch(gs, c->L && c->L->stat ? c->L->stat->name : NULL, pg, r);
        *result = r;
        return FP_GRID_VERIFY;
    }
    if (odd) {
        *result = r;
        return FP_GRID_ODD;
    }
    PY(Py_DecRef)(r);
    return FP_GRID_OK;
}
