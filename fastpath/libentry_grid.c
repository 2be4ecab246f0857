/* FlagGems' LibEntry.run in C (libentry.c): the grid run() computes, the
 * dicts it gives a grid function and its launch pre-hooks. */
#include "fastpath/libentry.h"

PyObject *le_meta_dict(PyObject *d, const struct lcall *c, PyObject *constexprs)
{
    PyObject *const *pos = c->pos, *const *kwv = c->kwv, *kwn = c->kwn;
    Py_ssize_t npos = c->npos;
    PyObject *names = fp_dget(d, le_cls.s_arg_names), *m = PY(PyDict_New)();
    if (!m || !names || FP_TYPE(names) != fpy.t_list) {
        trlat_py_drop(m);
        return NULL;
    }
    Py_ssize_t nn = trlat_py_size(names);
    for (Py_ssize_t i = 0; i < nn && i < npos; i++)
        if (PY(PyDict_SetItem)(m, PY(PyList_GetItem)(names, i), pos[i]) < 0)
            goto fail;
    for (Py_ssize_t i = 0, nk = kwn ? trlat_py_size(kwn) : 0; i < nk; i++)
        if (PY(PyDict_SetItem)(m, PY(PyTuple_GetItem)(kwn, i), kwv[i]) < 0)
            goto fail;
    Py_ssize_t it = 0;
    PyObject *k, *v;
    while (constexprs && PY(PyDict_Next)(constexprs, &it, &k, &v))
        if (PY(PyDict_SetItem)(m, k, v) < 0)
            goto fail;
    return m;
fail:
    PY(Py_DecRef)(m);
    return NULL;
}

/* meta[name] for each parameter of the function, of the dict run() gives a
 * grid function, {**dict(zip(self.arg_names, args)), **kwargs,
 * **constexprs}: the constexpr's, else the keyword's, else the positional
 * argument's (NULL: not in it); 0 when self.arg_names are not those names. */
static int meta_vals(const struct le *E, PyObject *d, const struct lcall *c, PyObject *constexprs, PyObject **vals)
{
    const struct fp_layout *L = E->L;
    PyObject *names = fp_dget(d, le_cls.s_arg_names);
    if (!names || FP_TYPE(names) != fpy.t_list || trlat_py_size(names) != (Py_ssize_t)L->n)
        return 0;
    for (unsigned j = 0; j < L->n; j++) {
        PyObject *n = PY(PyList_GetItem)(names, (Py_ssize_t)j);
        if (n != L->p[j].name && (!n || FP_TYPE(n) != fpy.t_str || PY(PyUnicode_Compare)(n, L->p[j].name) != 0)) {
            PY(PyErr_Clear)();
            return 0;
        }
        PyObject *v = PY(PyDict_GetItemWithError)(constexprs, L->p[j].name);
        if (!v && PY(PyErr_Occurred)()) {
            PY(PyErr_Clear)();
            return 0;
        }
        if (!v && c->kw[j] >= 0)
            v = c->kwv[c->kw[j]];
        if (!v && (Py_ssize_t)j < c->npos)
            v = c->pos[j];
        vals[j] = v;
    }
    return 1;
}

/* The grid a grid function's program computes for this call, without
 * calling it (gridprog.c): (g0, g1, g2) as grid(meta) + (1, 1) cut to
 * [0:3] is (a tuple's items, then 1s); NULL, no error, when it cannot say. */
PyObject *le_grid_program(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, PyObject *constexprs,
                          unsigned g[3])
{
    PyObject *vals[FP_MAX_ARGS];
    struct fp_gslot *gs;
    int tuple = 0;
    if (FP_TYPE(grid) != fpy.t_function || !meta_vals(E, d, c, constexprs, vals) ||
        fp_gprog_eval_meta(E->L, vals, grid, g, &tuple, &gs) || !tuple)
        return NULL; /* a list: grid + (1, 1) raises, as it will */
    PyObject *t = PY(PyTuple_New)(3);
    if (!t)
        PY(PyErr_Clear)(); /* the function is called instead */
    for (int i = 0; t && i < 3; i++) {
        PyObject *v = PY(PyLong_FromLong)((long)g[i]);
        if (!v) {
            PY(Py_DecRef)(t);
            PY(PyErr_Clear)();
            return NULL;
        }
        PY(PyTuple_SetItem)(t, i, v);
    }
    return t;
}

/* grid(meta) if callable, + (1, 1): run()'s grid before its pre-hooks
 * (new reference); a grid function's program's grid already cut to [0:3]. */
PyObject *le_grid_plus(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, PyObject *constexprs)
{
    PyObject *g;
    if (PY(PyCallable_Check)(grid)) {
        unsigned pg[3];
        if ((g = le_grid_program(E, d, grid, c, constexprs, pg))) {
            if (fp_conf.debug)
                fp_found_libentry_gprog++;
            return g;
        }
        PyObject *m = le_meta_dict(d, c, constexprs);
        if (!m)
            return NULL;
        g = PY(PyObject_Vectorcall)(grid, &m, 1, NULL);
        PY(Py_DecRef)(m);
    } else {
        g = fp_hold(grid);
    }
    PyObject *g2 = g ? PY(PyNumber_Add)(g, le_cls.one_one) : NULL;
    trlat_py_drop(g);
    return g2;
}

/* [0:3] of it: the grid run() indexes the kernel with (new reference; steals g2). */
PyObject *le_grid_cut(PyObject *g2)
{
    PyObject *g3 = g2 ? PY(PyObject_GetItem)(g2, le_cls.slice03) : NULL;
    trlat_py_drop(g2);
    return g3;
}

/* Each launch pre-hook called as run() calls it; -1 when one raised. */
int le_pre_hooks(PyObject *d, PyObject *hooks, const struct lcall *c)
{
    Py_ssize_t n = trlat_py_size(hooks);
    if (n <= 0)
        return 0;
    PyObject *nargs = le_meta_dict(d, c, NULL);
    int rc = nargs ? 0 : -1;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        /* {**hook_nargs, **hook_kwargs}, a dict of the hook's own: the
         * last hook's is hook_nargs itself, which nothing else sees */
        PyObject *h = PY(PyTuple_GetItem)(hooks, i), *m = i < n - 1 ? PY(PyDict_Copy)(nargs) : fp_hold(nargs);
        PyObject *r = m && PY(PyDict_Update)(m, PY(PyTuple_GetItem)(h, 1)) == 0
                          ? PY(PyObject_Vectorcall)(PY(PyTuple_GetItem)(h, 0), &m, 1, NULL)
                          : NULL;
        rc = r ? 0 : -1;
        trlat_py_drop(r);
        trlat_py_drop(m);
    }
    trlat_py_drop(nargs);
    return rc;
}
