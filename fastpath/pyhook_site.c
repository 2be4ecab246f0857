/* The caller's file:line for a hooked call: walk out from the current frame
 * past Triton's own frames (the lambda of KernelInterface.__getitem__,
 * Autotuner.run) to the first frame of the program. Known (code, offset)
 * pairs cost a hash lookup per frame; the line number (a scan of the line
 * table) is computed once per pair. */
#include "fastpath/pyhook.h"
#include "fastpath/pysites.h"
#include "interpose/log.h"

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

uint64_t trlat_pyhook_caller_site(void)
{
    PyObject *f = PY(PyEval_GetFrame)(); /* borrowed: the running frame */
    PyObject *owned = NULL;               /* the outer frames, new references */
    uint64_t site = 0;
    for (int depth = 0; f && depth < MAX_DEPTH; depth++) {
        PyObject *code = PY(PyFrame_GetCode)(f);
        int64_t off = frame_offset(f);
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
