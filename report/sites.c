#include "report/sites.h"
#include "interpose/python/pysites.h"
#include "interpose/tstate.h"

#include <stdio.h>

const char *trlat_site_text(uint64_t id, int kind, char *buf, size_t len)
{
    if (kind == TRLAT_SITE_PYTHON) {
        id = trlat_pysite_kernel(id);
        const char *t = trlat_pysite_text(id, buf, len);
        if (!t)
            snprintf(buf, len, "python#%llu", (unsigned long long)id);
        return t ? t : buf;
    }
    return trlat_native_site_text(id, buf, len);
}

const char *trlat_site_user_text(uint64_t id, char *buf, size_t len)
{
    return trlat_pysite_text(trlat_pysite_user(id), buf, len);
}
