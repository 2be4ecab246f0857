/* x.data_ptr() for an object that is not a tensor (FlagGems' StridedBuffer
 * and TypedPtr), without a Python frame when its class's data_ptr is a
 * function whose code is exactly `return self.<name>` (the reference:
 * libentry_model.py's getter, compared code object against code object as
 * LibEntry.run is): then the call is that attribute read, which is
 * PyObject_GenericGetAttr(x, name) for a class whose tp_getattro it is.
 * Each function (and the code it has) is looked at once; a few are
 * remembered, held. Anything else is called as x.data_ptr() is. The GIL
 * is held throughout. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"

#define NLEARNT 8

static struct {
    PyObject *fn, *code, *name; /* held; name NULL: not a getter */
} learnt[NLEARNT];
static unsigned next;

/* The attribute fn returns, when it is a getter (borrowed, held here). */
static PyObject *name_of(PyObject *fn)
{
    PyObject *code = PY(PyFunction_GetCode) ? PY(PyFunction_GetCode)(fn) : NULL;
    if (!code)
        return NULL;
    for (unsigned i = 0; i < NLEARNT; i++)
        if (learnt[i].fn == fn && learnt[i].code == code)
            return learnt[i].name;
    PyObject *check = fp_model_fn("getter");
    PyObject *r = check ? PY(PyObject_Vectorcall)(check, &fn, 1, NULL) : NULL;
    PY(PyErr_Clear)();
    PyObject *name = r && FP_TYPE(r) == fpy.t_str ? r : NULL;
    if (r && !name)
        PY(Py_DecRef)(r);
    unsigned i = next++ % NLEARNT;
    trlat_py_drop(learnt[i].fn);
    trlat_py_drop(learnt[i].code);
    trlat_py_drop(learnt[i].name);
    learnt[i].fn = fp_hold(fn);
    learnt[i].code = fp_hold(code);
    learnt[i].name = name;
    if (fp_conf.debug)
        trlat_log_debug("fast path: data_ptr %s: %s", name ? "read as the attribute" : "called",
                        name ? PY(PyUnicode_AsUTF8)(name) : "not `return self.<attribute>`");
    return name;
}

PyObject *fp_data_ptr(PyObject *v)
{
    return fp_data_ptr_read(v, NULL);
}

/* Whether x.name reads x's own attribute: object's lookup, and no class in
 * the MRO defines the name (so no descriptor runs). */
static int own_attr(PyObject *v, PyObject *name)
{
    void *t = FP_TYPE(v);
    return PY(_PyType_Lookup) && fp_generic_lookup(t) && !PY(_PyType_Lookup)((PyObject *)t, name);
}

PyObject *fp_data_ptr_read(PyObject *v, int *plain)
{
    if (plain)
        *plain = 0;
    PyObject *m = NULL, *name = NULL;
    int unbound = PY(_PyObject_GetMethod) ? PY(_PyObject_GetMethod)(v, fpy.s_data_ptr, &m) : -1;
    if (unbound < 0) {
        PyObject *argv[2] = {NULL, v};
        return PY(PyObject_VectorcallMethod)(fpy.s_data_ptr, argv + 1, 1 | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    }
    if (!m)
        return NULL; /* raised, as x.data_ptr would */
    if (unbound == 1 && fpy.t_function && FP_TYPE(m) == fpy.t_function && fp_generic_lookup(FP_TYPE(v)))
        name = name_of(m);
    /* the function's own read, self.<name>: what it returns or raises */
    PyObject *r = name      ? PY(PyObject_GenericGetAttr)(v, name)
                  : unbound ? PY(PyObject_Vectorcall)(m, &v, 1, NULL)
                            : PY(PyObject_Vectorcall)(m, NULL, 0, NULL);
    PY(Py_DecRef)(m);
    if (plain && r && name)
        *plain = own_attr(v, name);
    return r;
}

/* LibEntry's key reads of a pointer object's data_ptr(), when it reads the
 * object's own attribute (fp_data_ptr_read's plain), kept for the launch of
 * the same call: with no Python run between the reads, reading again gives
 * the same object, and reading it once is reading it as the launcher
 * would. Kept while the key is built; taken only while armed (libentry.c:
 * a tuple grid and no pre-hooks between them); the GIL is held throughout. */
#define NREADS 8
static _Thread_local struct {
    int armed;
    unsigned n;
    struct {
        PyObject *obj, *ptr; /* obj borrowed (the call holds it), ptr held */
    } r[NREADS];
} reads __attribute__((tls_model("initial-exec")));

void fp_ptrreads_keep(PyObject *v, PyObject *ptr)
{
    if (reads.n >= NREADS)
        return;
    reads.r[reads.n].obj = v;
    reads.r[reads.n].ptr = fp_hold(ptr);
    reads.n++;
}

void fp_ptrreads_arm(int on)
{
    reads.armed = on;
}

void fp_ptrreads_clear(void)
{
    for (unsigned i = 0; i < reads.n; i++)
        PY(Py_DecRef)(reads.r[i].ptr);
    reads.n = 0;
    reads.armed = 0;
}

uint64_t fp_found_ptrreads; /* TRLAT_FASTPATH_DEBUG */

PyObject *fp_ptrreads_take(PyObject *v)
{
    for (unsigned i = 0; reads.armed && i < reads.n; i++)
        if (reads.r[i].obj == v) {
            if (fp_conf.debug)
                fp_found_ptrreads++;
            return fp_hold(reads.r[i].ptr);
        }
    return NULL;
}
