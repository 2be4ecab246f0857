#include "interpose/cupti/load.h"
#include "interpose/config.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__aarch64__)
#define TARGET_DIR "targets/sbsa-linux/lib"
#else
#define TARGET_DIR "targets/x86_64-linux/lib"
#endif

static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL};

struct search {
    struct trlat_cupti_api *api;
    char err[256]; /* why the last candidate failed */
    int tried;
};

#define SYM(field, name, required)                                      \
    do {                                                                \
        *(void **)&api->field = trlat_real_dlsym(h, name);              \
        if ((required) && !api->field) {                                \
            snprintf(s->err, sizeof s->err, "%s lacks %s", path, name); \
            return -1;                                                  \
        }                                                               \
    } while (0)

static int resolve(struct search *s, void *h, const char *path)
{
    struct trlat_cupti_api *api = s->api;
    SYM(subscribe, "cuptiSubscribe", 1);
    SYM(unsubscribe, "cuptiUnsubscribe", 1);
    SYM(get_result_string, "cuptiGetResultString", 1);
    SYM(enable, "cuptiActivityEnable", 1);
    SYM(disable, "cuptiActivityDisable", 1);
    SYM(register_callbacks, "cuptiActivityRegisterCallbacks", 1);
    SYM(flush_all, "cuptiActivityFlushAll", 1);
    SYM(get_next_record, "cuptiActivityGetNextRecord", 1);
    SYM(get_num_dropped, "cuptiActivityGetNumDroppedRecords", 1);
    SYM(enable_callback, "cuptiEnableCallback", 1);
    SYM(get_version, "cuptiGetVersion", 0);
    SYM(get_timestamp, "cuptiGetTimestamp", 0);
    SYM(register_timestamp_callback, "cuptiActivityRegisterTimestampCallback", 0);
    SYM(set_attribute, "cuptiActivitySetAttribute", 0);
    return 0;
}

/* how: CHECK_FILE (skip a missing file), EXPLICIT (a path the user gave),
 * SONAME (the loader's search; not finding it is not a failure). */
enum { CHECK_FILE, EXPLICIT, SONAME };

static int try_path(struct search *s, const char *path, int how)
{
    if (how == CHECK_FILE && access(path, R_OK) != 0)
        return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (how == SONAME)
            return -1;
        s->tried++;
        snprintf(s->err, sizeof s->err, "%s", e ? e : path);
        return -1;
    }
    s->tried++;
    if (resolve(s, h, path) != 0) {
        dlclose(h);
        return -1;
    }
    s->api->handle = h;
    snprintf(s->api->path, sizeof s->api->path, "%s", path);
    return 0;
}

static int try_dir(struct search *s, const char *dir, const char *sub)
{
    char path[1024];
    for (int i = 0; sonames[i]; i++) {
        if (snprintf(path, sizeof path, "%s%s%s/%s", dir, sub ? "/" : "", sub ? sub : "", sonames[i]) >=
            (int)sizeof path)
            return -1;
        if (try_path(s, path, CHECK_FILE) == 0)
            return 0;
    }
    return -1;
}

/* Directories of loaded objects whose file name starts with prefix, and the
 * site-packages directories of all loaded objects. */
#define MAX_DIRS 4
struct loaded {
    const char *prefix;
    char dirs[MAX_DIRS][512];
    int ndirs;
    char sites[MAX_DIRS][512];
    int nsites;
};

static void add_unique(char (*list)[512], int *n, const char *s, size_t len)
{
    if (*n >= MAX_DIRS || len >= 512)
        return;
    for (int i = 0; i < *n; i++)
        if (strlen(list[i]) == len && strncmp(list[i], s, len) == 0)
            return;
    memcpy(list[*n], s, len);
    list[(*n)++][len] = 0;
}

static int scan_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct loaded *l = arg;
    const char *path = info->dlpi_name;
    if (!path || path[0] != '/')
        return 0;
    const char *base = strrchr(path, '/') + 1;
    if (l->prefix && strncmp(base, l->prefix, strlen(l->prefix)) == 0)
        add_unique(l->dirs, &l->ndirs, path, (size_t)(base - 1 - path));
    static const char *const markers[] = {"/site-packages/", "/dist-packages/"};
    for (int i = 0; i < 2; i++) {
        const char *m = strstr(path, markers[i]);
        if (m)
            add_unique(l->sites, &l->nsites, path, (size_t)(m - path) + strlen(markers[i]) - 1);
    }
    return 0;
}

static int try_loaded(struct search *s)
{
    struct loaded l = {.prefix = "libcupti.so"};
    dl_iterate_phdr(scan_loaded, &l);
    for (int i = 0; i < l.ndirs; i++)
        if (try_dir(s, l.dirs[i], NULL) == 0)
            return 0;
    return -1;
}

static int try_cuda_home(struct search *s)
{
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home)
        return -1;
    static const char *const subs[] = {"lib64", TARGET_DIR, "extras/CUPTI/lib64", NULL};
    for (int i = 0; subs[i]; i++)
        if (try_dir(s, home, subs[i]) == 0)
            return 0;
    return -1;
}

static int try_beside_runtime(struct search *s, struct loaded *l)
{
    /* toolkit: .../lib64; pip: .../nvidia/cuda_runtime/lib beside
     * .../nvidia/cuda_cupti/lib, or one .../nvidia/cu13/lib for both */
    static const char *const subs[] = {NULL, "../extras/CUPTI/lib64", "../../cuda_cupti/lib", NULL};
    for (int d = 0; d < l->ndirs; d++)
        for (int i = 0; i < 3; i++)
            if (try_dir(s, l->dirs[d], subs[i]) == 0)
                return 0;
    return -1;
}

static int try_pip(struct search *s, struct loaded *l)
{
    static const char *const subs[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib", "nvidia/cu12/lib",
                                       "triton/backends/nvidia/lib/cupti", NULL};
    for (int d = 0; d < l->nsites; d++)
        for (int i = 0; subs[i]; i++)
            if (try_dir(s, l->sites[d], subs[i]) == 0)
                return 0;
    return -1;
}

static int try_system(struct search *s)
{
    for (int i = 0; sonames[i]; i++)
        if (try_path(s, sonames[i], SONAME) == 0)
            return 0;
    static const char *const subs[] = {"lib64", TARGET_DIR, "extras/CUPTI/lib64", NULL};
    for (int i = 0; subs[i]; i++)
        if (try_dir(s, "/usr/local/cuda", subs[i]) == 0)
            return 0;
    return -1;
}

int trlat_cupti_load(struct trlat_cupti_api *api, char *why, size_t len)
{
    memset(api, 0, sizeof *api);
    struct search s = {.api = api};
    const char *lib = trlat_config_str(TRLAT_OPT_CUPTI_LIB);
    if (lib && *lib) {
        if (try_path(&s, lib, EXPLICIT) == 0)
            return 0;
        snprintf(why, len, "TRLAT_CUPTI_LIB=%s cannot be used: %s", lib, s.err);
        return -1;
    }
    struct loaded l = {.prefix = "libcudart.so"};
    dl_iterate_phdr(scan_loaded, &l);
    if (try_loaded(&s) == 0 || try_cuda_home(&s) == 0 || try_beside_runtime(&s, &l) == 0 || try_pip(&s, &l) == 0 ||
        try_system(&s) == 0)
        return 0;
    if (s.tried)
        snprintf(why, len, "no usable libcupti (last tried: %s); set TRLAT_CUPTI_LIB", s.err);
    else
        snprintf(why, len,
                 "libcupti not found (searched CUDA_HOME, beside libcudart, pip's nvidia packages, "
                 "the system); set TRLAT_CUPTI_LIB");
    return -1;
}
