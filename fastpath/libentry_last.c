/* A LibEntry's last keys (libentry.c): the entry its kernel_cache gave for
 * each of the last few keys, taken again without building the key tuple
 * or looking it up when a call's key is one of them and that dict has not
 * changed since (its version, fp_dict_version: CPython 3.11-3.13).
 *
 * A key is compared as a signature of its items: exact ints by value
 * (within int64), floats by their bits (NaN never: it equals nothing), strs
 * by their UTF-8 bytes (up to FP_LE_STR: FlagGems' mm passes a dtype name
 * made anew on every call), None, True, False, torch dtypes and classes by
 * identity, tuples of those item by item. Each of these hashes and
 * compares by value or identity in C, so equal signatures make equal keys
 * of equal hashes, and the lookup they skip runs no Python code; a key
 * with anything else is looked up every time. Identity serves only for
 * objects the dict's equal key holds itself (a str it does not: the
 * call's may be freed and its address reused). Everything runs with the
 * GIL held. */
#include "fastpath/fp_py.h"

#include <stdlib.h>
#include <string.h>

#define LAST_N 4

enum { S_INT = 1, S_ID, S_FLT, S_TUP, S_STR };

#define FP_LE_STR 64 /* bytes of a str compared by value; a longer one is looked up */

struct fp_le_last {
    struct {
        uint64_t version;        /* the dict's when the entry was found */
        PyObject *cache, *entry; /* borrowed: cache holds entry while its version stands */
        unsigned n;
        uint64_t w[FP_LE_SIG];
    } s[LAST_N];
    unsigned next;
};

static int put(struct fp_le_sig *s, uint64_t tag, uint64_t v)
{
    if (s->n + 2 > FP_LE_SIG)
        return -1;
    s->w[s->n++] = tag;
    s->w[s->n++] = v;
    return 0;
}

/* Equal strs are equal code points, and so equal UTF-8 (a str without one,
 * a lone surrogate's, is not compared). */
static int enc_str(struct fp_le_sig *s, PyObject *o)
{
    Py_ssize_t len;
    const char *u = PY(PyUnicode_AsUTF8AndSize)(o, &len); /* fp_ready: there */
    if (!u) {
        PY(PyErr_Clear)();
        return -1;
    }
    unsigned words = (unsigned)(len + 7) / 8;
    if (len > FP_LE_STR || put(s, S_STR, (uint64_t)len) || s->n + words > FP_LE_SIG)
        return -1;
    if (words)
        s->w[s->n + words - 1] = 0; /* the last word's padding */
    memcpy(&s->w[s->n], u, (size_t)len);
    s->n += words;
    return 0;
}

static int enc(struct fp_le_sig *s, PyObject *o, int depth)
{
    void *t = FP_TYPE(o);
    if (t == fpy.t_long) {
        int ovf = 0;
        long long v;
        if (fp_small_int(o, &v))
            return put(s, S_INT, (uint64_t)v);
        v = PY(PyLong_AsLongLongAndOverflow)(o, &ovf);
        if (ovf || (v == -1 && PY(PyErr_Occurred)())) {
            PY(PyErr_Clear)();
            return -1;
        }
        return put(s, S_INT, (uint64_t)v);
    }
    if (t == fpy.t_str)
        return enc_str(s, o);
    if (o == fpy.o_none || o == fpy.o_true || o == fpy.o_false || (fpy.t_torch_dtype && t == fpy.t_torch_dtype) ||
        t == FP_TYPE((PyObject *)fpy.t_long))
        return put(s, S_ID, (uint64_t)(uintptr_t)o); /* a class: one whose metaclass is type */
    if (t == fpy.t_float) {
        double d = PY(PyFloat_AsDouble)(o);
        uint64_t bits;
        if (d != d)
            return -1;
        memcpy(&bits, &d, sizeof bits);
        return put(s, S_FLT, bits);
    }
    if (t == fpy.t_tuple && depth < 3) {
        Py_ssize_t n = trlat_py_size(o);
        if (n < 0 || put(s, S_TUP, (uint64_t)n))
            return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (enc(s, PY(PyTuple_GetItem)(o, i), depth + 1))
                return -1;
        return 0;
    }
    return -1;
}

int fp_le_sig_make(struct fp_le_sig *s, const struct fp_le_part *p, unsigned n)
{
    s->n = 0;
    if (!fpy.dict_version)
        return -1; /* nothing to say the dict changed */
    for (unsigned i = 0; i < n; i++) {
        if (p[i].b ? put(s, S_TUP, 2) || enc(s, p[i].a, 1) || enc(s, p[i].b, 1) : enc(s, p[i].a, 0))
            return -1;
    }
    return 0;
}

PyObject *fp_le_last_find(const struct fp_le_last *m, const struct fp_le_sig *s, PyObject *cache)
{
    if (!m)
        return NULL;
    uint64_t version = fp_dict_version(cache);
    for (unsigned i = 0; i < LAST_N; i++)
        if (m->s[i].entry && m->s[i].cache == cache && m->s[i].version == version && m->s[i].n == s->n &&
            memcmp(m->s[i].w, s->w, s->n * sizeof s->w[0]) == 0)
            return m->s[i].entry;
    return NULL;
}

void fp_le_last_store(struct fp_le_last **mp, const struct fp_le_sig *s, PyObject *cache, PyObject *entry)
{
    if (!*mp && !(*mp = calloc(1, sizeof **mp)))
        return;
    struct fp_le_last *m = *mp;
    unsigned i = m->next++ % LAST_N;
    m->s[i].version = fp_dict_version(cache);
    m->s[i].cache = cache;
    m->s[i].entry = entry;
    m->s[i].n = s->n;
    memcpy(m->s[i].w, s->w, s->n * sizeof s->w[0]);
}
