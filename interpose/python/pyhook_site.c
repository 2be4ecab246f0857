/* The caller's file:line for a hooked call: walk out from the current frame
 * past Triton's own frames (the lambda of KernelInterface.__getitem__,
 * Autotuner.run) to the first frame of the program. Known (code, offset)
 * pairs cost a hash lookup per frame; the line number (a scan of the line
 * table) is computed once per pair. */
#include "interpose/python/pyhook.h"
#include "interpose/python/pysites.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

static char *skip_prefix;
static size_t skip_len;

void trlat_pyhook_set_skip_prefix(const char *prefix)
{
    char *p = prefix && *prefix ? strdup(prefix) : NULL;
    skip_len = p ? strlen(p) : 0;
    skip_prefix = p; /* the old copy leaks: set once per process */
}

/* Key of the frame's current instruction: its offset (3.11+), else its line. */
static int64_t frame_offset(PyObject *f)
{
    if (PY(PyFrame_GetLasti))
        return PY(PyFrame_GetLasti)(f);
    return (int64_t)PY(PyFrame_GetLineNumber)(f) | ((int64_t)1 << 40);
}

static void learn(PyObject *f, PyObject *code, int64_t off, struct trlat_pysite_hit *hit)
{
    const char *file = NULL;
    PyObject *name = PY(PyObject_GetAttrString)(code, "co_filename");
    if (name)
        file = PY(PyUnicode_AsUTF8)(name);
    if (!file)
        PY(PyErr_Clear)();
    int skip = file && skip_len && strncmp(file, skip_prefix, skip_len) == 0;
    int line = PY(PyFrame_GetLineNumber)(f);
    if (trlat_pysite_insert(code, off, file, line, skip, hit))
        PY(Py_IncRef)(code); /* its address stays this code's */
    if (name)
        PY(Py_DecRef)(name);
}

/* The running frame without a frame object (CPython 3.12 and 3.13).
 * PyEval_GetFrame makes a PyFrameObject for a function's frame the first
 * time it is asked, and CPython frees it when the function returns: ~350
 * instructions and an allocation for each call of a Python function that
 * launches (`def add(x, y): add_kernel[grid](...)`), as much as a
 * fast-path hit's key. The interpreter frame PyEval_GetFrame wraps is the
 * thread state's cframe->current_frame in 3.12 (PyThreadState.cframe at
 * offset 56, _PyCFrame.current_frame its first word) and its current_frame
 * in 3.13 (offset 72; Include/cpython/pystate.h, offsetof against each
 * version's headers), and PyUnstable_InterpreterFrame_GetCode/GetLasti
 * answer for it what PyFrame_GetCode/GetLasti answer for the frame object.
 * Read so only after FRAME_AGREE calls found the frame object's f_frame
 * (offset 24) that same pointer, compared before anything is read through
 * it, with the same code and offset; off for the process at the first
 * difference. Only where the running frame is the site (the C launcher's
 * caller); frames to skip (Triton's) are walked as before. Builds whose
 * objects are laid out otherwise (free-threaded: ob_type is not the second
 * word) walk. The GIL guards the state. */
enum { TS_CFRAME_312 = 56, TS_FRAME_313 = 72, FO_F_FRAME = 24, FRAME_AGREE = 16 };
static struct {
    int state; /* 0 unresolved, 1 comparing, 2 reading, -1 off */
    int v313;  /* the frame in the thread state itself, not behind a _PyCFrame */
    unsigned agreed;
    PyObject *(*code)(void *); /* PyUnstable_InterpreterFrame_GetCode: a new reference */
    int (*lasti)(void *);      /* PyUnstable_InterpreterFrame_GetLasti */
} FR;

static void frame_resolve(void)
{
    FR.state = -1;
    const unsigned long *pv = trlat_real_dlsym(RTLD_DEFAULT, "Py_Version");
    const void *none = trlat_real_dlsym(RTLD_DEFAULT, "_Py_NoneStruct");
    const void *none_type = trlat_real_dlsym(RTLD_DEFAULT, "_PyNone_Type");
    if (!pv || ((*pv >> 16) != 0x030c && (*pv >> 16) != 0x030d) || !PY(PyThreadState_Get) || !none ||
        ((const void *const *)none)[1] != none_type)
        return;
    FR.v313 = (*pv >> 16) == 0x030d;
    FR.code = (PyObject * (*)(void *)) trlat_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetCode");
    FR.lasti = (int (*)(void *))trlat_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLasti");
    if (FR.code && FR.lasti)
        FR.state = 1;
}

/* The running _PyInterpreterFrame. 3.12: NULL when its _PyCFrame is not on
 * this thread's stack above us (where the eval loop keeps it). */
static void *frame_running(void)
{
    const char *ts = (const char *)PY(PyThreadState_Get)();
    if (FR.v313)
        return *(void *const *)(ts + TS_FRAME_313);
    char here;
    const void *cf = *(const void *const *)(ts + TS_CFRAME_312);
    if ((uintptr_t)cf - (uintptr_t)&here > ((uintptr_t)1 << 28))
        return NULL;
    return *(void *const *)cf;
}

/* The site where the running frame is one, from the interpreter frame
 * (FR on): 0 when it is not known yet or is to be skipped. */
static uint64_t site_direct(void)
{
    void *fr = frame_running();
    if (!fr)
        return 0;
    PyObject *code = FR.code(fr);
    struct trlat_pysite_hit hit;
    int known = trlat_pysite_lookup(code, FR.lasti(fr), &hit);
    PY(Py_DecRef)(code); /* a known key's code is held by the table */
    return known && !hit.skip ? hit.site : 0;
}

/* While comparing: the running frame f read both ways. */
static void frame_compare(PyObject *f, PyObject *code, int64_t off)
{
    void *fr = frame_running();
    int same = fr && fr == *(void *const *)((const char *)f + FO_F_FRAME);
    if (same) {
        PyObject *c = FR.code(fr);
        same = c == code && FR.lasti(fr) == off;
        PY(Py_DecRef)(c);
    }
    if (!same) {
        FR.state = -1;
        static atomic_flag once;
        trlat_log_once(&once, "Python call sites are read through frame objects from now on (the running "
                              "interpreter frame did not read as this CPython's)");
    } else if (++FR.agreed >= FRAME_AGREE) {
        FR.state = 2;
    }
}

unsigned trlat_pyhook_sites_direct(void)
{
    return FR.state == 2 ? FR.agreed : 0;
}

uint64_t trlat_pyhook_caller_site(void)
{
    if (__builtin_expect(FR.state == 2, 1)) {
        uint64_t site = site_direct();
        if (site)
            return site;
    } else if (!FR.state) {
        frame_resolve();
    }
    PyObject *f = PY(PyEval_GetFrame)(); /* borrowed: the running frame */
    PyObject *owned = NULL;              /* the outer frames, new references */
    uint64_t site = 0;
    for (int depth = 0; f && depth < MAX_DEPTH; depth++) {
        PyObject *code = PY(PyFrame_GetCode)(f);
        int64_t off = frame_offset(f);
        if (depth == 0 && FR.state == 1)
            frame_compare(f, code, off);
        struct trlat_pysite_hit hit;
        if (!trlat_pysite_lookup(code, off, &hit))
            learn(f, code, off, &hit);
        PY(Py_DecRef)(code);
        if (!hit.skip) {
            site = hit.site;
            break;
        }
        PyObject *back = PY(PyFrame_GetBack)(f);
        if (!back && PY(PyErr_Occurred)())
            PY(PyErr_Clear)(); /* no memory for the frame object: no site */
        if (owned)
            PY(Py_DecRef)(owned);
        f = owned = back;
    }
    if (owned)
        PY(Py_DecRef)(owned);
    return site;
}
