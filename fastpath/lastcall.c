/* The layout's last hits: a call whose key would be byte for byte the key
 * of a recent hit of the same JITFunction takes that entry without
 * building, hashing and comparing the key. A loop launching one kernel
 * (tritonbench's) mostly passes the same objects again; a decode step
 * launches one kernel with two block sizes, or an int that crosses a
 * multiple of 16 now and then: FP_LAST_N slots per layout, the one taken
 * last tried first, the least recently used one replaced.
 *
 * The key is a function of: the layout, the device, the mode, each
 * argument's key words, and the options (debug, instrumentation mode: the
 * knobs, stable while fpy.epoch is; calls with keyword options never come
 * here). Per argument, a call matches a slot when:
 *   - a non-tensor is the same object as last time: exact ints, floats,
 *     bools, strs, None and triton.language.dtype objects are immutable,
 *     and the object is held here, so its address cannot have been reused
 *     by another value;
 *   - or, for a specialized parameter (not constexpr, not annotated), a new
 *     int of the same class (i32/i64/u64, div16, not 1) or a new float or
 *     bool: the key has only the class, the value goes to the parameter;
 *   - or, for a parameter annotated i32/i64/u64, a new int of the same
 *     class there (fp_annint_class);
 *   - or, for a constexpr or other annotated one, keyed by value, a new
 *     exact int of the same value (key_value keys the int's bits);
 *   - a tensor reads the same dtype, is_cuda and alignment class (and the
 *     same pointer where annotated, which the key names).
 * The entry is still the memo's while fp_memo.gen is unchanged (an
 * eviction or removal bumps it), and the caller checks it against Triton's
 * cache as for any hit. Value mode only (identical mode keys every value). */
#include "fastpath/fp_py.h"

#include <stdlib.h>

_Static_assert(FP_MAX_ARGS <= 64, "struct fp_call's tensor bits");

static void drop_objs(struct fp_last *s, unsigned n)
{
    for (unsigned j = 0; s->obj && j < n; j++)
        if (s->obj[j]) {
            PY(Py_DecRef)(s->obj[j]); /* immutable types without __del__: no Python code runs */
            s->obj[j] = NULL;
        }
}

void fp_last_init(struct fp_layout *L)
{
    size_t n = L->n ? L->n : 1;
    size_t per = n * (sizeof(PyObject *) + sizeof(struct fp_want) + sizeof(struct fp_argkey) + sizeof(struct fp_lten));
    char *m = calloc(FP_LAST_N, per);
    if (!m)
        return; /* no shortcut: every call keys in full */
    L->last_mem = m;
    for (unsigned k = 0; k < FP_LAST_N; k++) { /* each array 8-byte aligned: the sizes are multiples of 8 */
        L->last[k].obj = (PyObject **)(void *)m;
        m += n * sizeof(PyObject *);
        L->last[k].want = (struct fp_want *)(void *)m;
        m += n * sizeof(struct fp_want);
        L->last[k].a = (struct fp_argkey *)(void *)m;
        m += n * sizeof(struct fp_argkey);
        L->last[k].ten = (struct fp_lten *)(void *)m;
        m += n * sizeof(struct fp_lten);
    }
}

void fp_last_forget(struct fp_layout *L)
{
    for (unsigned k = 0; k < FP_LAST_N; k++) {
        drop_objs(&L->last[k], L->n);
        L->last[k].e = NULL;
    }
}

/* The slot a hit on e goes to: e's own, else an empty or stale one, else
 * the least recently used (never the one taken last: its tick is not
 * renewed while it keeps being taken). */
static unsigned slot_for(struct fp_layout *L, struct fp_entry *e)
{
    unsigned pick = L->last_mru;
    uint32_t oldest = 0;
    for (unsigned k = 0; k < FP_LAST_N; k++)
        if (L->last[k].e == e)
            return k;
    for (unsigned k = 0; k < FP_LAST_N; k++) {
        const struct fp_last *s = &L->last[k];
        if (!s->e || s->gen != fp_memo.gen || s->epoch != fpy.epoch)
            return k;
        if (k == L->last_mru)
            continue;
        uint32_t age = L->last_tick - s->used;
        if (age >= oldest) {
            oldest = age;
            pick = k;
        }
    }
    return pick;
}

void fp_last_save(struct fp_call *c, struct fp_entry *e)
{
    struct fp_layout *L = c->L;
    PyObject *jd = L->jdebug;
    if (!L->last_mem || c->nopts || fp_conf.mode != TRLAT_FP_MODE_VALUE || !fpy.watchers || e->kind != FP_E_VALUE ||
        !jd || (FP_TYPE(jd) != fpy.t_bool && jd != fpy.o_none)) { /* the key's debug word is jdebug's truth */
        fp_last_forget(L);
        return;
    }
    for (unsigned j = 0; j < L->n; j++)
        if (c->ak[j].tag == FP_T_PTROBJ) { /* mutable: keyed in full every call */
            fp_last_forget(L);
            return;
        }
    unsigned k = slot_for(L, e);
    struct fp_last *s = &L->last[k];
    for (unsigned j = 0; j < L->n; j++) /* hold the new before dropping the old: they may be the same */
        if (c->ak[j].tag != FP_T_TENSOR)
            PY(Py_IncRef)(c->vals[j]);
    drop_objs(s, L->n);
    s->nten = 0;
    for (unsigned j = 0; j < L->n; j++) {
        const struct fp_argkey *a = &c->ak[j];
        s->a[j] = *a;
        s->obj[j] = a->tag == FP_T_TENSOR ? NULL : c->vals[j];
        if (a->tag == FP_T_TENSOR) {
            const struct fp_param *P = &L->p[j];
            s->ten[s->nten++] =
                (struct fp_lten){a->dtype, (uint16_t)j, a->wi, a->flags, !P->dns && !P->dnsa, P->annotated};
        }
    }
    memcpy(s->want, c->want, c->nwant * sizeof c->want[0]);
    s->nwant = c->nwant;
    s->device = c->device;
    s->gen = fp_memo.gen;
    s->epoch = fpy.epoch;
    s->e = e;
    s->saves++;
    s->used = ++L->last_tick;
    L->last_mru = (uint8_t)k;
}

/* A different non-tensor object v for argument j (the slot's: was): 1
 * when it keys as the slot's did (its want's value written), 0 when not. */
static int same_class(struct fp_call *c, unsigned j, PyObject *v, PyObject *was, const struct fp_argkey *a)
{
    const struct fp_param *P = &c->L->p[j];
    void *t = FP_TYPE(v);
    if (a->tag == FP_T_ANNINT) { /* an int of an integer annotation: its class */
        uint8_t flags;
        uint64_t val;
        if (fp_annint_class(P, v, &flags, &val) || flags != a->flags)
            return 0;
        c->want[a->wi].val = val;
        return 1;
    }
    if (P->constexpr_ || P->annotated) { /* keyed by value: an int of the same value keys the same */
        uint64_t b, ob;
        int u, ou;
        return t == fpy.t_long && FP_TYPE(was) == fpy.t_long && fp_read_int(v, &b, &u) == 0 &&
               fp_read_int(was, &ob, &ou) == 0 && b == ob && u == ou;
    }
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

/* Argument j read as a tensor, once per call whichever slots are tried. */
static int tensor(struct fp_call *c, unsigned j, PyObject **dtype, int *cuda, uint64_t *ptr)
{
    uint64_t bit = 1ull << j;
    if (!(c->tread & bit)) {
        PyObject *v = c->vals[j];
        int cu = 0;
        c->tread |= bit;
        if (!fp_is_tensor(v) || fp_read_tensor(c, v, &c->tdtype[j], &cu, &c->tptr[j]))
            c->tbad |= bit;
        else if (cu)
            c->tcuda |= bit;
    }
    if (c->tbad & bit)
        return -1;
    *dtype = c->tdtype[j];
    *cuda = (c->tcuda & bit) != 0;
    *ptr = c->tptr[j];
    return 0;
}

static int match(struct fp_call *c, struct fp_last *s)
{
    struct fp_layout *L = c->L;
    struct fp_entry *e = s->e;
    uint32_t saves = s->saves;
    if (!e || s->gen != fp_memo.gen || s->epoch != fpy.epoch || s->device != c->device)
        return 0;
    if (s->nwant)
        memcpy(c->want, s->want, s->nwant * sizeof c->want[0]);
    c->nwant = s->nwant;
    uint8_t changed[FP_MAX_ARGS];
    unsigned nchanged = 0;
    /* the non-tensors first: comparing them runs no Python code. Most are
     * the same objects as last time: one compare each (a tensor's is NULL) */
    PyObject *const *vals = c->vals, *const *was = s->obj;
    for (unsigned j = 0, n = L->n; j < n; j++) {
        if (__builtin_expect(vals[j] == was[j], 1) || !was[j])
            continue;
        if (!same_class(c, j, vals[j], was[j], &s->a[j]))
            return 0;
        changed[nchanged++] = (uint8_t)j;
    }
    for (unsigned t = 0; t < s->nten; t++) {
        const struct fp_lten *T = &s->ten[t];
        PyObject *dtype;
        int cuda;
        uint64_t ptr;
        if (tensor(c, T->j, &dtype, &cuda, &ptr))
            return 0;
        int d16 = T->align && (ptr & 15) == 0;
        struct fp_want *w = &c->want[T->wi];
        if (dtype != T->dtype || T->flags != (cuda | d16 << 1) || (T->annotated && ptr != w->val))
            return 0;
        w->val = ptr;
    }
    /* a getter may have run Python code (a launch, a knob set): still the same? */
    if (s->nten && (s->e != e || s->saves != saves || s->gen != fp_memo.gen || s->epoch != fpy.epoch))
        return 0;
    for (unsigned i = 0; i < nchanged; i++) { /* the new values, held and kept as last time's were */
        unsigned j = changed[i];
        PY(Py_IncRef)(vals[j]);
        PY(Py_DecRef)(s->obj[j]);
        s->obj[j] = vals[j];
        if (s->a[j].wi >= 0)
            s->want[s->a[j].wi].val = c->want[s->a[j].wi].val;
    }
    c->shortcut = e;
    return 1;
}

int fp_last_match(struct fp_call *c)
{
    struct fp_layout *L = c->L;
    if (!L->last_mem || fp_conf.mode != TRLAT_FP_MODE_VALUE)
        return 0;
    c->modes = -1;
    c->nrefs = 0;
    c->tread = c->tbad = c->tcuda = 0;
    unsigned first = L->last_mru;
    for (unsigned i = 0; i < FP_LAST_N; i++) { /* the slot taken last, then the others in order */
        unsigned k = i == 0 ? first : (i - 1 < first ? i - 1 : i);
        if (match(c, &L->last[k])) {
            if (i) { /* the slot tried first is the youngest already (slot_for never takes it) */
                L->last[k].used = ++L->last_tick;
                L->last_mru = (uint8_t)k;
            }
            return 1;
        }
    }
    return 0;
}
