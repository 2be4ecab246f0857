/* The key's Python-free half: bytes, hash, and Triton 3.6's specialization
 * classes for the values the key describes (fastpath/key_args.c extracts them
 * from Python objects). */
#include "fastpath/fp.h"

#include <limits.h>

void fp_key_text(struct fp_key *k, const char *s, size_t n)
{
    fp_key_u64(k, (uint64_t)n);
    fp_key_bytes(k, s, n);
    /* pad to 8 so the next words stay aligned in the buffer (cheap compares) */
    static const unsigned char zero[8];
    if (n & 7)
        fp_key_bytes(k, zero, 8 - (n & 7));
}

static inline uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

uint64_t fp_hash(const void *p, size_t n)
{
    /* Four independent multiply-rotate lanes over 32 bytes at a time (the
     * key is hashed on every call); keys are compared whole on a match, so
     * this only has to spread them over the buckets. */
    const unsigned char *b = p;
    const uint64_t M = 0x9e3779b97f4a7c15ULL;
    uint64_t h0 = n, h1 = 0xbf58476d1ce4e5b9ULL, h2 = 0x94d049bb133111ebULL, h3 = ~(uint64_t)n;
    for (; n >= 32; b += 32, n -= 32) {
        uint64_t w[4];
        memcpy(w, b, 32);
        h0 = rotl((h0 ^ w[0]) * M, 31);
        h1 = rotl((h1 ^ w[1]) * M, 27);
        h2 = rotl((h2 ^ w[2]) * M, 33);
        h3 = rotl((h3 ^ w[3]) * M, 29);
    }
    for (; n >= 8; b += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h0 = rotl((h0 ^ w) * M, 31);
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        h1 = rotl((h1 ^ w) * M, 27);
    }
    uint64_t h = h0 ^ rotl(h1, 17) ^ rotl(h2, 37) ^ rotl(h3, 51);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

/* specialize.cc handle_long_type: `if (specialize_value && val == 1)` ->
 * ("constexpr", 1); else i32 when INT32_MIN <= val <= INT32_MAX, i64 when
 * it fits a long long, u64 otherwise; key "D" when specialized, aligned and
 * val % 16 == 0 (`(val & 15) == 0`). */
int fp_int_spec(int is_u64, uint64_t bits, int specialize, int align, int *div16)
{
    *div16 = 0;
    if (is_u64) {
        *div16 = specialize && align && (bits & 15) == 0;
        return FP_S_U64;
    }
    int64_t v = (int64_t)bits;
    if (specialize && v == 1)
        return FP_S_CONST;
    *div16 = specialize && align && (v & 15) == 0;
    return (v >= INT32_MIN && v <= INT32_MAX) ? FP_S_I32 : FP_S_I64;
}

unsigned fp_spec_width(int spec)
{
    switch (spec) {
    case FP_S_I32:
    case FP_S_FP32:
        return 4;
    case FP_S_I64:
    case FP_S_U64:
    case FP_S_PTR:
        return 8;
    case FP_S_U1:
        return 1;
    default:
        return 0;
    }
}

/* driver.py pack_fp32: `float f32 = (float)f; return *(uint32_t*)&f32;` */
uint64_t fp_float_bits(double d)
{
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
