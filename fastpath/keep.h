/* The objects a C __getitem__ hands out (getitem.c's kernel[grid]
 * launchers, runner.c's compiled[grid] runners): freed ones pooled for the
 * next subscript (every call makes one), as CPython keeps its own small
 * objects, each still holding its type; and kept for a loop: where
 * obj[grid] runs in a loop with a tuple grid something else holds (a code
 * constant, a variable), the object made for it is kept and handed out
 * again once Python has dropped it (its reference count back to the
 * table's), instead of made and freed per call. A temporary grid (a tuple
 * built per call, held by nothing else) or a grid function is never kept:
 * holding it would keep what it holds alive; one the program still holds
 * (f = kernel[grid]) is never handed out twice. The GIL guards the tables. */
#ifndef TRLAT_FP_KEEP_H
#define TRLAT_FP_KEEP_H

#include "fastpath/fp_py.h"

/* Bound to (owner, grid): a JITFunction's or a CompiledKernel's. */
struct fp_bound {
    struct trlat_pyhead head;
    void *vectorcall;
    PyObject *owner, *grid;
};
#define FP_KEEP_N 8
struct fp_keep {
    struct fp_bound *o[FP_KEEP_N];
    unsigned next;
};
#define FP_POOL_N 4
struct fp_pool {
    struct fp_bound *free[FP_POOL_N];
    unsigned n;
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "refcount's low word");
/* The low 32 bits of ob_refcnt (GIL builds, 3.9-3.14): the count of a
 * mortal object; an immortal one reads huge. */
static inline uint32_t fp_refs_of(const void *o)
{
    return *(const uint32_t *)o;
}

/* A grid worth keeping: a tuple of exact ints (holding it holds nothing
 * else). */
static inline int fp_keepable(PyObject *grid)
{
    Py_ssize_t n = fp_tuple_len(grid);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = fp_tuple_get(grid, i);
        if (!x || FP_TYPE(x) != fpy.t_long)
            return 0;
    }
    return n > 0;
}

/* The object kept for (owner, grid) once Python dropped it (a new
 * reference), else NULL with *keep: whether one made now should be kept. */
static inline struct fp_bound *fp_keep_take(struct fp_keep *k, PyObject *owner, PyObject *grid, int *keep)
{
    *keep = 0;
    /* a tuple only this call holds (built for it) is not in the table: a
     * kept object holds its grid; nor is it worth keeping */
    if (FP_TYPE(grid) != fpy.t_tuple || fp_refs_of(grid) < 2)
        return NULL;
    int busy = 0;
    for (unsigned i = 0; i < FP_KEEP_N; i++) {
        struct fp_bound *b = k->o[i];
        if (b && b->owner == owner && b->grid == grid) {
            if (fp_refs_of(b) == 1) {
                PY(Py_IncRef)((PyObject *)b);
                return b;
            }
            busy = 1; /* the program holds it */
        }
    }
    *keep = !busy && fp_keepable(grid);
    return NULL;
}

static inline void fp_keep_add(struct fp_keep *k, struct fp_bound *b)
{
    struct fp_bound *old = k->o[k->next];
    PY(Py_IncRef)((PyObject *)b);
    k->o[k->next] = b;
    k->next = (k->next + 1) % FP_KEEP_N;
    if (old)
        PY(Py_DecRef)((PyObject *)old); /* its dealloc: a tuple of ints, an owner held elsewhere too */
}

/* A pooled or new object of type (a new reference; NULL with an error set). */
static inline struct fp_bound *fp_pool_get(struct fp_pool *p, PyObject *type)
{
    struct fp_bound *b;
    if (p->n) {
        b = p->free[--p->n];
        PY(_Py_NewReference)((PyObject *)b); /* a reference count of 1, as a new object's */
    } else {
        b = (struct fp_bound *)PY(PyType_GenericAlloc)(type, 0);
    }
    return b;
}

/* The type's dealloc: drops owner and grid, then pools or frees b. */
static inline void fp_pool_put(struct fp_pool *p, struct fp_bound *b)
{
    void *tp = b->head.type;
    trlat_py_drop(b->owner);
    trlat_py_drop(b->grid);
    b->owner = b->grid = NULL;
    if (p->n < FP_POOL_N && PY(_Py_NewReference)) {
        p->free[p->n++] = b;
        return;
    }
    PY(PyObject_Free)((PyObject *)b);
    PY(Py_DecRef)(tp); /* instances of heap types hold their type */
}

#endif
