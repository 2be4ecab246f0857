/* The CPython C API as trlat reaches it: through dlsym in the running
 * process (never by linking libpython), so one libtrlat.so serves every
 * Python 3.9+ and a program without Python pays nothing. Objects stay
 * opaque; only ABI-stable layouts (PyMethodDef) are declared here.
 *
 * To add an entry point, append a row to TRLAT_PYAPI: X(required, return
 * type, name, (parameters)). A required entry missing from the process means
 * no hook at all; an optional one (required 0) is NULL when absent: test it
 * before calling. Call through PY(name)(...). */
#ifndef TRLAT_PYAPI_H
#define TRLAT_PYAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct _object PyObject; /* as in fastpath.h */
typedef ssize_t Py_ssize_t;
typedef PyObject *(*trlat_pycfunc_fast_kw)(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* PyMethodDef (stable ABI). */
struct trlat_pymethoddef {
    const char *ml_name;
    void *ml_meth;
    int ml_flags;
    const char *ml_doc;
};

#define TRLAT_METH_VARARGS 0x0001
#define TRLAT_METH_KEYWORDS 0x0002
#define TRLAT_METH_NOARGS 0x0004
#define TRLAT_METH_O 0x0008
#define TRLAT_METH_FASTCALL 0x0080
#define TRLAT_PY_FILE_INPUT 257
#define TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))

/* Every PyObject starts with these two words (non-debug CPython 3.9+). */
struct trlat_pyhead {
    Py_ssize_t refcnt;
    void *type;
};
/* The word after the head: an exact tuple's or list's length
 * (PyVarObject.ob_size), an exact dict's (ma_used); read without a call
 * into libpython. */
static inline Py_ssize_t trlat_py_size(PyObject *o)
{
    return ((const Py_ssize_t *)(void *)o)[2];
}

/* Making a type (stable ABI: object.h, descrobject.h, typeslots.h). */
struct py_slot {
    int slot;
    void *pfunc;
};
struct py_spec {
    const char *name;
    int basicsize, itemsize;
    unsigned int flags;
    struct py_slot *slots;
};
struct py_member {
    const char *name;
    int type;
    Py_ssize_t offset;
    int flags;
    const char *doc;
};
#define PY_TP_CALL 50
#define PY_TP_DEALLOC 52
#define PY_TP_DESCR_GET 54
#define PY_TP_DOC 56
#define PY_TP_GETATTRO 58
#define PY_TP_MEMBERS 72
#define PY_TPFLAGS_DEFAULT (1UL << 18) /* Py_TPFLAGS_HAVE_VERSION_TAG */
#define PY_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#define PY_TPFLAGS_METHOD_DESCRIPTOR (1UL << 17)
#define PY_T_OBJECT 6
#define PY_T_PYSSIZET 19
#define PY_READONLY 1

#define TRLAT_PYAPI(X)                                                                                     \
    /* a fast-path hit's calls first, in one cache line (trlat_py is aligned to one) */                    \
    X(1, void, Py_IncRef, (PyObject *))                                                                    \
    X(1, void, Py_DecRef, (PyObject *))                                                                    \
    X(1, PyObject *, PyErr_Occurred, (void))                                                               \
    X(1, PyObject *, PyEval_GetFrame, (void)) /* borrowed */                                               \
    X(1, PyObject *, PyFrame_GetCode, (PyObject *))                                                        \
    X(0, int, PyFrame_GetLasti, (PyObject *)) /* 3.11+ */                                                  \
    X(0, int, PyCode_Addr2Line, (PyObject *, int))                                                         \
    X(0, void *, PyEval_SaveThread, (void)) /* PyThreadState * */                                          \
    X(0, void, PyEval_RestoreThread, (void *))                                                             \
    /* interpreter and GIL */                                                                              \
    X(1, int, Py_IsInitialized, (void))                                                                    \
    X(0, int, _Py_IsFinalizing, (void)) /* up to 3.12 */                                                   \
    X(0, int, Py_IsFinalizing, (void))  /* 3.13+ */                                                        \
    X(1, int, PyGILState_Check, (void))                                                                    \
    X(1, int, PyGILState_Ensure, (void)) /* returns PyGILState_STATE */                                    \
    X(1, void, PyGILState_Release, (int))                                                                  \
    X(1, int, Py_AddPendingCall, (int (*)(void *), void *))                                                \
    X(1, PyObject *, PyThreadState_Get, (void))                                                            \
    /* modules, attributes, calls */                                                                       \
    X(1, PyObject *, PyImport_ImportModule, (const char *))                                                \
    X(1, PyObject *, PyImport_GetModule, (PyObject *))                                                     \
    X(1, PyObject *, PySys_GetObject, (const char *)) /* borrowed */                                       \
    X(1, PyObject *, PyObject_GetAttrString, (PyObject *, const char *))                                   \
    X(1, int, PyObject_SetAttrString, (PyObject *, const char *, PyObject *))                              \
    X(1, PyObject *, PyObject_Call, (PyObject *, PyObject *, PyObject *))                                  \
    X(1, PyObject *, PyObject_CallObject, (PyObject *, PyObject *))                                        \
    X(0, PyObject *, PyObject_Vectorcall, (PyObject *, PyObject *const *, size_t, PyObject *)) /* 3.11+ */ \
    X(1, PyObject *, PyObject_Str, (PyObject *))                                                           \
    X(1, int, PyObject_IsTrue, (PyObject *))                                                               \
    X(1, PyObject *, PyCFunction_NewEx, (struct trlat_pymethoddef *, PyObject *, PyObject *))              \
    /* tuples, dicts, numbers, strings */                                                                  \
    X(1, PyObject *, PyTuple_New, (Py_ssize_t))                                                            \
    X(1, Py_ssize_t, PyTuple_Size, (PyObject *))                                                           \
    X(1, PyObject *, PyTuple_GetItem, (PyObject *, Py_ssize_t))      /* borrowed */                        \
    X(1, int, PyTuple_SetItem, (PyObject *, Py_ssize_t, PyObject *)) /* steals */                          \
    X(1, PyObject *, PyDict_New, (void))                                                                   \
    X(1, int, PyDict_SetItem, (PyObject *, PyObject *, PyObject *))                                        \
    X(1, int, PyDict_SetItemString, (PyObject *, const char *, PyObject *))                                \
    X(1, PyObject *, PyDict_GetItemString, (PyObject *, const char *)) /* borrowed */                      \
    X(1, PyObject *, PyLong_FromLong, (long))                                                              \
    X(1, PyObject *, PyLong_FromUnsignedLongLong, (unsigned long long))                                    \
    X(1, long, PyLong_AsLong, (PyObject *))                                                                \
    X(1, PyObject *, PyBool_FromLong, (long))                                                              \
    X(1, const char *, PyUnicode_AsUTF8, (PyObject *))                                                     \
    X(1, PyObject *, PyUnicode_FromString, (const char *))                                                 \
    X(1, int, PyUnicode_CompareWithASCIIString, (PyObject *, const char *))                                \
    /* references and errors */                                                                            \
    X(1, void, PyErr_Clear, (void))                                                                        \
    X(1, void, PyErr_Fetch, (PyObject **, PyObject **, PyObject **))                                       \
    X(1, void, PyErr_Restore, (PyObject *, PyObject *, PyObject *))                                        \
    X(0, void, PyErr_NormalizeException, (PyObject **, PyObject **, PyObject **))                          \
    X(1, void, PyErr_SetString, (PyObject *, const char *))                                                \
    /* frames (3.9+: PyFrame_GetCode/GetBack return new references) */                                     \
    X(1, PyObject *, PyFrame_GetBack, (PyObject *))                                                        \
    X(0, void *, PyInterpreterState_Get, (void))          /* PyInterpreterState * (3.9+) */                \
    X(0, void *, PyInterpreterState_ThreadHead, (void *)) /* PyThreadState * */                            \
    X(0, void *, PyThreadState_Next, (void *))                                                             \
    X(0, PyObject *, PyThreadState_GetFrame, (void *)) /* new reference (3.9+) */                          \
    X(1, int, PyFrame_GetLineNumber, (PyObject *))                                                         \
    /* running trlat's own Python file */                                                                  \
    X(1, PyObject *, Py_CompileString, (const char *, const char *, int))                                  \
    X(1, PyObject *, PyEval_EvalCode, (PyObject *, PyObject *, PyObject *))                                \
    X(1, PyObject *, PyEval_GetBuiltins, (void)) /* borrowed */                                            \
    /* ---- the launch memo (fastpath/fp_*.c, issue 5): all optional, checked by fp_py_init ---- */        \
    X(0, PyObject *, PyObject_GetAttr, (PyObject *, PyObject *))                                           \
    X(0, PyObject *, PyObject_GenericGetAttr, (PyObject *, PyObject *))                                    \
    /* hasattr's lookup, raising nothing for a missing attribute: 3.13's name, and before */               \
    X(0, int, PyObject_GetOptionalAttr, (PyObject *, PyObject *, PyObject **))                             \
    X(0, int, _PyObject_LookupAttr, (PyObject *, PyObject *, PyObject **))                                 \
    X(0, int, PyObject_SetAttr, (PyObject *, PyObject *, PyObject *))                                      \
    X(0, PyObject *, PyObject_VectorcallMethod, (PyObject *, PyObject *const *, size_t, PyObject *))       \
    X(0, PyObject *, PyObject_RichCompare, (PyObject *, PyObject *, int))                                  \
    X(0, int, PyCallable_Check, (PyObject *))                                                              \
    X(0, long long, PyLong_AsLongLongAndOverflow, (PyObject *, int *))                                     \
    X(0, unsigned long long, PyLong_AsUnsignedLongLong, (PyObject *))                                      \
    X(0, PyObject *, PyLong_FromLongLong, (long long))                                                     \
    X(0, double, PyFloat_AsDouble, (PyObject *))                                                           \
    X(0, PyObject *, PyDict_GetItemWithError, (PyObject *, PyObject *)) /* borrowed */                     \
    X(0, int, PyDict_Next, (PyObject *, Py_ssize_t *, PyObject **, PyObject **))                           \
    X(0, Py_ssize_t, PyDict_Size, (PyObject *))                                                            \
    X(0, PyObject *, PyDict_Copy, (PyObject *))                                                            \
    X(0, int, PyDict_Update, (PyObject *, PyObject *))                                                     \
    X(0, Py_ssize_t, PyList_Size, (PyObject *))                                                            \
    X(0, PyObject *, PyList_GetItem, (PyObject *, Py_ssize_t)) /* borrowed */                              \
    X(0, const char *, PyUnicode_AsUTF8AndSize, (PyObject *, Py_ssize_t *))                                \
    X(0, PyObject *, PyUnicode_InternFromString, (const char *))                                           \
    X(0, int, PyUnicode_Compare, (PyObject *, PyObject *))                                                 \
    X(0, PyObject *, PyType_FromSpec, (void *)) /* PyType_Spec * */                                        \
    X(0, PyObject *, PyDescr_NewMethod, (PyObject *, struct trlat_pymethoddef *))                          \
    X(0, void, PyObject_Free, (void *))                                                                    \
    X(0, PyObject *, PyType_GenericAlloc, (PyObject *, Py_ssize_t))                                        \
    X(0, void, _Py_NewReference, (PyObject *))                                                             \
    X(0, PyObject *, PyVectorcall_Call, (PyObject *, PyObject *, PyObject *))                              \
    X(0, PyObject *, PyMethod_New, (PyObject *, PyObject *))                                               \
    X(0, int, PyDict_AddWatcher, (int (*)(int, PyObject *, PyObject *, PyObject *))) /* 3.12+ */           \
    X(0, int, PyDict_Watch, (int, PyObject *))                                       /* 3.12+ */           \
    X(0, int, PyType_AddWatcher, (int (*)(PyObject *)))                              /* 3.12+ */           \
    X(0, int, PyType_Watch, (int, PyObject *))                                       /* 3.12+ */           \
    X(0, PyObject *, PyFunction_GetCode, (PyObject *))                               /* borrowed */        \
    X(0, PyObject *, PyFunction_New, (PyObject *, PyObject *))                                             \
    X(0, int, PyFunction_SetClosure, (PyObject *, PyObject *))                                             \
    X(0, PyObject *, PyCell_New, (PyObject *))                                                             \
    X(0, void *, PyType_GetSlot, (PyObject *, int)) /* heap types; 3.10+ all types */                      \
    X(0, int, PyType_IsSubtype, (PyObject *, PyObject *))                                                  \
    X(0, int, _PyObject_GetMethod, (PyObject *, PyObject *, PyObject **)) /* 3.7+, exported */             \
    X(0, PyObject **, _PyObject_GetDictPtr, (PyObject *))                 /* exported; NULL: no dict */    \
    X(0, PyObject *, _PyType_Lookup, (PyObject *, PyObject *))            /* exported; borrowed */         \
    X(0, unsigned long, PyType_GetFlags, (PyObject *))                                                     \
    X(0, PyObject *, PyFunction_GetGlobals, (PyObject *))              /* borrowed */                      \
    X(0, PyObject *, PyFunction_GetClosure, (PyObject *))              /* borrowed; NULL when none */      \
    X(0, int, PyContextVar_Get, (PyObject *, PyObject *, PyObject **)) /* *value: new reference */         \
    /* FlagGems' LibEntry.run in C (fastpath/libentry.c) */                                                \
    X(0, PyObject *, PyObject_GetItem, (PyObject *, PyObject *))                                           \
    X(0, PyObject *, PyNumber_Add, (PyObject *, PyObject *))                                               \
    X(0, PyObject *, PySlice_New, (PyObject *, PyObject *, PyObject *))                                    \
    X(0, PyObject *, PySequence_Tuple, (PyObject *))                                                       \
    /* ---- end of the launch memo's block ---- */

struct trlat_pyapi {
#define TRLAT_PYAPI_FIELD(req, ret, name, params) ret(*name) params;
    TRLAT_PYAPI(TRLAT_PYAPI_FIELD)
#undef TRLAT_PYAPI_FIELD
    /* data symbols */
    PyObject *none;        /* &_Py_NoneStruct */
    PyObject *exc_runtime; /* *PyExc_RuntimeError */
};

extern struct trlat_pyapi trlat_py;
#define PY(name) (trlat_py.name)

/* Py_XDECREF. */
static inline void trlat_py_drop(PyObject *o)
{
    if (o)
        PY(Py_DecRef)(o);
}

/* getattr(o, name) with any error cleared: a new reference, or NULL (also
 * for o == NULL). */
static inline PyObject *trlat_py_attr(PyObject *o, const char *name)
{
    PyObject *r = o ? PY(PyObject_GetAttrString)(o, name) : NULL;
    if (!r)
        PY(PyErr_Clear)();
    return r;
}

/* Resolves the table once; 1 when every required entry is present (a Python
 * interpreter is linked into the process), else 0. Thread-safe. */
int trlat_pyapi_resolve(void);
/* Name of the first required entry found missing, for messages. */
const char *trlat_pyapi_missing(void);

/* Whether the interpreter is up and not finalizing (needs a resolved table). */
int trlat_py_running(void);

#endif
