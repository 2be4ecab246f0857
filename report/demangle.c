#include "report/demangle.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

char *trlat_demangle(const char *name)
{
    static demangle_fn fn;
    static int looked;
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    if (!looked) {
        /* the global scope, else a C++ runtime some library loaded locally */
        fn = (demangle_fn)trlat_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
        static const char *const libs[] = {"libstdc++.so.6", "libc++abi.so.1", NULL};
        for (int i = 0; !fn && libs[i]; i++) {
            void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h)
                fn = (demangle_fn)trlat_real_dlsym(h, "__cxa_demangle");
        }
        looked = 1;
    }
    int status = -1;
    char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(d);
        return NULL;
    }
    return d;
}
