/* The string hash trlat's tables share (FNV-1a, 64 bits). */
#ifndef TRLAT_HASH_H
#define TRLAT_HASH_H

#include <stdint.h>

static inline uint64_t trlat_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#endif
