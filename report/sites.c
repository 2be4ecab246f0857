#include "report/sites.h"
#include "interpose/tstate.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* libunwind's name when built with it (fastpath/stacks.c), else dladdr. */
__attribute__((weak)) const char *trlat_native_site_text(uint64_t id, char *buf, size_t len)
{
    Dl_info info;
    void *addr = (void *)(uintptr_t)id;
    if (!dladdr(addr, &info) || !info.dli_fname) {
        snprintf(buf, len, "0x%llx", (unsigned long long)id);
        return buf;
    }
    const char *lib = strrchr(info.dli_fname, '/');
    lib = lib ? lib + 1 : info.dli_fname;
    if (info.dli_sname && info.dli_saddr)
        snprintf(buf, len, "%s!%s+0x%lx", lib, info.dli_sname, (unsigned long)((char *)addr - (char *)info.dli_saddr));
    else
        snprintf(buf, len, "%s+0x%lx", lib, (unsigned long)((char *)addr - (char *)info.dli_fbase));
    return buf;
}

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
