/* Reading trlat's own Python files: see sharefile.h. */
#include "interpose/python/sharefile.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This library's directory: dladdr's name when absolute, else the mapping's
 * path in /proc/self/maps (LD_PRELOAD=build/libtrlat.so, then a chdir, must
 * not find another). */
static int own_dir(char *dir, size_t len)
{
    Dl_info info;
    if (dladdr((void *)own_dir, &info) && info.dli_fname && info.dli_fname[0] == '/') {
        snprintf(dir, len, "%s", info.dli_fname);
    } else {
        FILE *m = fopen("/proc/self/maps", "re");
        if (!m)
            return -1;
        char line[4400];
        uintptr_t me = (uintptr_t)own_dir;
        dir[0] = 0;
        while (fgets(line, sizeof line, m)) {
            unsigned long lo, hi;
            int off = 0;
            if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) >= 2 && off && me >= lo && me < hi) {
                line[strcspn(line, "\n")] = 0;
                snprintf(dir, len, "%s", line + off);
                break;
            }
        }
        fclose(m);
        if (dir[0] != '/')
            return -1;
    }
    *strrchr(dir, '/') = 0;
    return 0;
}

char *trlat_share_read(const char *name, size_t max, char *path, size_t len)
{
    char dir[4096];
    if (own_dir(dir, sizeof dir)) {
        snprintf(path, len, "<libtrlat.so's directory>/share/trlat/%s", name);
        return NULL;
    }
    const char *const rel[] = {"/share/trlat/", "/../share/trlat/"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, len, "%s%s%s", dir, rel[i], name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        char *buf = malloc(max);
        size_t n = buf ? fread(buf, 1, max - 1, f) : 0;
        fclose(f);
        if (buf && n > 0) {
            buf[n] = 0;
            return buf;
        }
        free(buf);
    }
    snprintf(path, len, "%s/share/trlat/%s", dir, name);
    return NULL;
}
