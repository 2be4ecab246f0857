#include "interpose/python/pyapi.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

struct trlat_pyapi trlat_py __attribute__((aligned(64))); /* the first eight: a hit's (pyapi.h) */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int ok;
static const char *missing;

static void *sym(const char *name)
{
    /* glibc's dlsym: trlat's own exported dlsym is not for trlat. */
    return trlat_real_dlsym(RTLD_DEFAULT, name);
}

static void resolve(void)
{
    int all = 1;
#define TRLAT_PYAPI_LOAD(req, ret, name, params) \
    trlat_py.name = (ret(*) params)sym(#name);   \
    if ((req) && !trlat_py.name && all) {        \
        all = 0;                                 \
        missing = #name;                         \
    }
    TRLAT_PYAPI(TRLAT_PYAPI_LOAD)
#undef TRLAT_PYAPI_LOAD
    trlat_py.none = sym("_Py_NoneStruct");
    PyObject **rt = sym("PyExc_RuntimeError");
    trlat_py.exc_runtime = rt ? *rt : NULL;
    if (!trlat_py.none || !trlat_py.exc_runtime) {
        all = 0;
        missing = missing ? missing : "_Py_NoneStruct";
    }
    atomic_store(&ok, all);
}

int trlat_pyapi_resolve(void)
{
    pthread_once(&once, resolve);
    return atomic_load_explicit(&ok, memory_order_relaxed);
}

const char *trlat_pyapi_missing(void)
{
    return missing;
}

int trlat_py_running(void)
{
    if (!PY(Py_IsInitialized)())
        return 0;
    if (PY(Py_IsFinalizing))
        return !PY(Py_IsFinalizing)();
    if (PY(_Py_IsFinalizing))
        return !PY(_Py_IsFinalizing)();
    return 1;
}
