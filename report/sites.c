#include "report/sites.h"
#include "interpose/tstate.h"

#include <stdio.h>

/* report/native_site_text.c: "lib.so!symbol+0xoff" from the object's symbol
 * table (or dladdr), demangled. */
const char *trlat_native_site_text(uint64_t id, char *buf, size_t len);

const char *trlat_site_text(uint64_t id, int kind, char *buf, size_t len)
{
    if (kind == TRLAT_SITE_PYTHON) {
        const char *t = trlat_python_site_text ? trlat_python_site_text(id, buf, len) : NULL;
        if (!t)
            snprintf(buf, len, "python#%llu", (unsigned long long)id);
        return t ? t : buf;
    }
    return trlat_native_site_text(id, buf, len);
}
