/* The layout's last hit: a call whose key would be byte for byte the key of
 * the previous hit of the same JITFunction takes that entry without
 * building, hashing and comparing the key. A loop launching one kernel
 * (tritonbench's, a decode step's) mostly passes the same objects again.
 *
 * The key is a function of: the layout, the device, the mode, each
 * argument's key words, and the options (debug, instrumentation mode: the
 * knobs, stable while fpy.epoch is; calls with keyword options never come
 * here). Per argument, a call matches when:
 *   - a non-tensor is the same object as last time: exact ints, floats,
 *     bools, strs and None are immutable, and the object is held here, so
 *     its address cannot have been reused by another value;
 *   - or, for a specialized parameter (not constexpr, not annotated), a new
 *     int of the same class (i32/i64/u64, div16, not 1) or a new float or
 *     bool: the key has only the class, the value goes to the parameter;
 *   - a tensor reads the same dtype, is_cuda and alignment class (and the
 *     same pointer where annotated, which the key names).
 * The entry is still the memo's while fp_memo.gen is unchanged (an
 * eviction or removal bumps it), and the caller checks it against Triton's
 * cache as for any hit. Value mode only (identical mode keys every value). */
#include "fastpath/fp_py.h"

static void drop_objs(struct fp_last *s, unsigned n)
{
    for (unsigned j = 0; j < n; j++)
        if (s->a[j].obj) {
            PY(Py_DecRef)(s->a[j].obj); /* exact immutable types: no Python code runs */
            s->a[j].obj = NULL;
        }
}

void fp_last_forget(struct fp_layout *L)
{
    drop_objs(&L->last, L->n);
    L->last.e = NULL;
}

void fp_last_save(struct fp_call *c, struct fp_entry *e)
{
    struct fp_layout *L = c->L;
    struct fp_last *s = &L->last;
    PyObject *jd = L->jdebug;
    if (c->nopts || fp_conf.mode != TRLAT_FP_MODE_VALUE || !fpy.watchers || e->kind != FP_E_VALUE || !jd ||
        (FP_TYPE(jd) != fpy.t_bool && jd != fpy.o_none)) { /* the key's debug word is jdebug's truth */
        fp_last_forget(L);
        return;
    }
    for (unsigned j = 0; j < L->n; j++) /* hold the new before dropping the old: they may be the same */
        if (c->ak[j].tag != FP_T_TENSOR)
            PY(Py_IncRef)(c->vals[j]);
    drop_objs(s, L->n);
    for (unsigned j = 0; j < L->n; j++) {
        s->a[j] = c->ak[j];
        s->a[j].obj = c->ak[j].tag == FP_T_TENSOR ? NULL : c->vals[j];
    }
    memcpy(s->want, c->want, c->nwant * sizeof c->want[0]);
    s->nwant = c->nwant;
    s->device = c->device;
    s->gen = fp_memo.gen;
    s->epoch = fpy.epoch;
    s->e = e;
}

/* A different non-tensor object for argument j: 1 when it keys as the last
 * one did (its want's value written), 0 when not. */
static int same_class(struct fp_call *c, unsigned j, PyObject *v, const struct fp_argkey *a)
{
    const struct fp_param *P = &c->L->p[j];
    if (P->constexpr_ || P->annotated)
        return 0; /* keyed by value */
    void *t = FP_TYPE(v);
    struct fp_want *w = a->wi >= 0 ? &c->want[a->wi] : NULL; /* none for an int 1 (FP_S_CONST) */
    if (a->tag == FP_T_INT && t == fpy.t_long) {
        uint8_t spec, d16;
        uint64_t val;
        if (fp_int_class(P, v, &spec, &d16, &val) || spec != a->spec || d16 != a->flags)
            return 0;
        if (w)
            w->val = val;
        return 1;
    }
    if (!w)
        return 0;
    if (a->tag == FP_T_FLOAT && t == fpy.t_float) {
        w->val = fp_float_bits(PY(PyFloat_AsDouble)(v));
        return 1;
    }
    if (a->tag == FP_T_BOOL && t == fpy.t_bool) {
        w->val = v == fpy.o_true;
        return 1;
    }
    return 0;
}

int fp_last_match(struct fp_call *c)
{
    struct fp_layout *L = c->L;
    struct fp_last *s = &L->last;
    struct fp_entry *e = s->e;
    if (!e || s->gen != fp_memo.gen || s->epoch != fpy.epoch || s->device != c->device ||
        fp_conf.mode != TRLAT_FP_MODE_VALUE)
        return 0;
    memcpy(c->want, s->want, s->nwant * sizeof c->want[0]);
    c->nwant = s->nwant;
    uint8_t changed[FP_MAX_ARGS];
    unsigned nchanged = 0, ntensors = 0;
    /* the non-tensors first: comparing them runs no Python code */
    for (unsigned j = 0; j < L->n; j++) {
        const struct fp_argkey *a = &s->a[j];
        PyObject *v = c->vals[j];
        if (a->tag == FP_T_TENSOR) {
            ntensors++;
        } else if (v != a->obj) {
            if (!same_class(c, j, v, a))
                return 0;
            changed[nchanged++] = (uint8_t)j;
        }
    }
    c->modes = -1;
    c->nrefs = 0;
    for (unsigned j = 0; ntensors && j < L->n; j++) {
        const struct fp_argkey *a = &s->a[j];
        if (a->tag != FP_T_TENSOR)
            continue;
        ntensors--;
        PyObject *v = c->vals[j], *dtype;
        const struct fp_param *P = &L->p[j];
        int cuda;
        uint64_t ptr;
        if (!fp_is_tensor(v) || fp_read_tensor(c, v, &dtype, &cuda, &ptr))
            return 0;
        int d16 = !P->dns && !P->dnsa && (ptr & 15) == 0;
        struct fp_want *w = &c->want[a->wi];
        if (dtype != a->dtype || a->flags != (cuda | d16 << 1) || (P->annotated && ptr != w->val))
            return 0;
        w->val = ptr;
    }
    /* a getter may have run Python code (a launch, a knob set): still the same? */
    if (s->e != e || s->gen != fp_memo.gen || s->epoch != fpy.epoch)
        return 0;
    for (unsigned i = 0; i < nchanged; i++) { /* the new values, held and kept as last time's were */
        unsigned j = changed[i];
        PY(Py_IncRef)(c->vals[j]);
        PY(Py_DecRef)(s->a[j].obj);
        s->a[j].obj = c->vals[j];
        if (s->a[j].wi >= 0)
            s->want[s->a[j].wi].val = c->want[s->a[j].wi].val;
    }
    c->shortcut = e;
    return 1;
}
