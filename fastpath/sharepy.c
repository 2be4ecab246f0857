/* A Python file of trlat's share directory (gridcheck.py, libentry_model.py)
 * run in a namespace of its own, and the functions it defines taken from
 * it. Off every hit path: each file is loaded once, when first needed. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/python/sharefile.h"

#include <stdlib.h>
#include <string.h>

int fp_share_load(const char *file, const char *modname, const char *const *names, PyObject **fns, unsigned n,
                  char *path, size_t pathlen)
{
    char *src = trlat_share_read(file, 1 << 17, path, pathlen);
    if (!src)
        return -1;
    PyObject *code = PY(Py_CompileString)(src, path, TRLAT_PY_FILE_INPUT);
    free(src);
    PyObject *g = code ? PY(PyDict_New)() : NULL, *name = NULL, *pfile = NULL, *r = NULL;
    int ok = g && PY(PyDict_SetItemString)(g, "__builtins__", PY(PyEval_GetBuiltins)()) == 0 &&
             (name = PY(PyUnicode_FromString)(modname)) && PY(PyDict_SetItemString)(g, "__name__", name) == 0 &&
             (pfile = PY(PyUnicode_FromString)(path)) && PY(PyDict_SetItemString)(g, "__file__", pfile) == 0 &&
             (r = PY(PyEval_EvalCode)(code, g, g));
    for (unsigned i = 0; i < n; i++)
        fns[i] = NULL;
    for (unsigned i = 0; ok && i < n; i++)
        ok = (fns[i] = PY(PyDict_GetItemString)(g, names[i])) != NULL;
    for (unsigned i = 0; i < n; i++) {
        if (ok)
            PY(Py_IncRef)(fns[i]); /* their __globals__ keep the namespace */
        else
            fns[i] = NULL;
    }
    PY(PyErr_Clear)();
    trlat_py_drop(r);
    trlat_py_drop(pfile);
    trlat_py_drop(name);
    trlat_py_drop(g);
    trlat_py_drop(code);
    return ok ? 0 : -2;
}

PyObject *fp_model_fn(const char *name)
{
    static const char *const names[2] = {"check", "getter"};
    static PyObject *fns[2];
    static int loaded;
    if (!loaded++) {
        char path[4200];
        if (fp_share_load("libentry_model.py", "trlat_libentry_model", names, fns, 2, path, sizeof path))
            trlat_log("fast path: %s did not load; FlagGems' LibEntry.run is not served above its compiled[grid] "
                      "call, and data_ptr() methods are called",
                      path);
    }
    for (unsigned i = 0; i < 2; i++)
        if (!strcmp(names[i], name))
            return fns[i];
    return NULL;
}
