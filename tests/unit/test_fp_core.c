/* The launch memo's Python-free layers: Triton 3.6's integer classes, the
 * key bytes and hash, the slot map's byte-for-byte check, and the memo's
 * bound, CLOCK eviction, replacement and pinning. */
#include "fastpath/fp.h"
#include "tests/unit/check_main.h"

#include <stdlib.h>

START_TEST(int_classes_follow_specialize_cc)
{
    int d;
    /* == 1 becomes a constexpr only when specialized */
    ck_assert_int_eq(fp_int_spec(0, 1, 1, 1, &d), FP_S_CONST);
    ck_assert_int_eq(fp_int_spec(0, 1, 0, 1, &d), FP_S_I32);
    ck_assert_int_eq(d, 0);
    /* multiples of 16: "D" when specialized and aligned */
    ck_assert_int_eq(fp_int_spec(0, 32, 1, 1, &d), FP_S_I32);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(fp_int_spec(0, 32, 1, 0, &d), FP_S_I32);
    ck_assert_int_eq(d, 0); /* do_not_specialize_on_alignment */
    ck_assert_int_eq(fp_int_spec(0, 32, 0, 1, &d), FP_S_I32);
    ck_assert_int_eq(d, 0); /* do_not_specialize */
    ck_assert_int_eq(fp_int_spec(0, 0, 1, 1, &d), FP_S_I32);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(fp_int_spec(0, (uint64_t)(int64_t)-16, 1, 1, &d), FP_S_I32);
    ck_assert_int_eq(d, 1);
    /* the i32 / i64 boundary, both signs */
    ck_assert_int_eq(fp_int_spec(0, 2147483647, 1, 1, &d), FP_S_I32);
    ck_assert_int_eq(fp_int_spec(0, 2147483648ULL, 1, 1, &d), FP_S_I64);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(fp_int_spec(0, (uint64_t)(int64_t)-2147483648LL, 1, 1, &d), FP_S_I32);
    ck_assert_int_eq(fp_int_spec(0, (uint64_t)(int64_t)-2147483649LL, 1, 1, &d), FP_S_I64);
    /* past int64: u64 */
    ck_assert_int_eq(fp_int_spec(1, 0x8000000000000010ULL, 1, 1, &d), FP_S_U64);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(fp_int_spec(1, 0x8000000000000011ULL, 1, 1, &d), FP_S_U64);
    ck_assert_int_eq(d, 0);
    ck_assert_uint_eq(fp_spec_width(FP_S_I32), 4);
    ck_assert_uint_eq(fp_spec_width(FP_S_U1), 1);
    ck_assert_uint_eq(fp_spec_width(FP_S_PTR), 8);
    ck_assert_uint_eq(fp_spec_width(FP_S_CONST), 0);
    /* pack_fp32: (float)d */
    ck_assert_uint_eq(fp_float_bits(1.0), 0x3f800000u);
    ck_assert_uint_eq(fp_float_bits(-0.0), 0x80000000u);
}
END_TEST

START_TEST(key_bytes_text_and_overflow)
{
    static struct fp_key a, b;
    fp_key_reset(&a);
    fp_key_reset(&b);
    fp_key_text(&a, "num_warps", 9);
    fp_key_text(&b, "num_warp", 8);
    ck_assert_uint_eq(a.len % 8, 0);
    fp_key_finish(&a);
    fp_key_finish(&b);
    ck_assert(a.len != b.len || memcmp(a.b, b.b, a.len) != 0);
    ck_assert(a.hash != b.hash);
    /* "ab"+"c" and "a"+"bc" differ: texts are length-prefixed */
    fp_key_reset(&a);
    fp_key_reset(&b);
    fp_key_text(&a, "ab", 2);
    fp_key_text(&a, "c", 1);
    fp_key_text(&b, "a", 1);
    fp_key_text(&b, "bc", 2);
    ck_assert(memcmp(a.b, b.b, a.len) != 0);
    fp_key_reset(&a);
    for (int i = 0; i < FP_KEY_MAX / 8 + 1; i++)
        fp_key_u64(&a, (uint64_t)i);
    ck_assert(a.overflow);
    ck_assert_uint_le(a.len, FP_KEY_MAX);
}
END_TEST

/* A block as Triton's launcher lays out (x*, y*, n i32, f fp32, b u1, 2 scratch). */
static void block(uint32_t *off, uint32_t *size, unsigned char *blob, uint32_t *len, uint64_t gs)
{
    uint32_t sz[7] = {8, 8, 4, 4, 1, 8, 8}, o = 0;
    for (int i = 0; i < 7; i++) {
        uint32_t a = sz[i] >= 8 ? 8 : sz[i];
        o = (o + a - 1) / a * a;
        off[i] = o;
        size[i] = sz[i];
        o += sz[i];
    }
    *len = o;
    memset(blob, 0, o);
    uint64_t x = 0x7f0000001000, y = 0x7f0000002000;
    uint32_t n = 1000, f = fp_float_bits(1.5);
    memcpy(blob + off[0], &x, 8);
    memcpy(blob + off[1], &y, 8);
    memcpy(blob + off[2], &n, 4);
    memcpy(blob + off[3], &f, 4);
    blob[off[4]] = 1;
    memcpy(blob + off[5], &gs, 8);
}

START_TEST(slot_map_checks_every_slot)
{
    uint32_t off[7], size[7], len;
    unsigned char blob[128], buf[128];
    struct fp_want w[5] = {{.spec = FP_S_PTR, .arg = 0, .val = 0x7f0000001000},
                           {.spec = FP_S_PTR, .arg = 1, .val = 0x7f0000002000},
                           {.spec = FP_S_I32, .arg = 2, .val = 1000},
                           {.spec = FP_S_FP32, .arg = 3, .val = 0},
                           {.spec = FP_S_U1, .arg = 4, .val = 1}};
    w[3].val = fp_float_bits(1.5);
    struct fp_slot slots[8];
    unsigned n;
    block(off, size, blob, &len, 0);
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, len, slots, &n), FP_MAP_VALUE);
    ck_assert_uint_eq(n, 5);
    /* widest first, each width in parameter order: pointers, i32 and fp32, u1 */
    unsigned order[5] = {0, 1, 2, 3, 4}, width[5] = {8, 8, 4, 4, 1};
    for (unsigned i = 0; i < 5; i++) {
        ck_assert_uint_eq(slots[i].want, order[i]);
        ck_assert_uint_eq(slots[i].width, width[i]);
    }
    /* patching this call's values writes only the slots */
    struct fp_want w2[5];
    memcpy(w2, w, sizeof w);
    w2[0].val = 0x7f0000009000;
    w2[2].val = (uint32_t)-5;
    w2[4].val = 0;
    memcpy(buf, blob, len);
    fp_slots_patch(buf, slots, n, w2);
    uint64_t x;
    int32_t i32;
    memcpy(&x, buf + off[0], 8);
    memcpy(&i32, buf + off[2], 4);
    ck_assert_uint_eq(x, 0x7f0000009000);
    ck_assert_int_eq(i32, -5);
    ck_assert_uint_eq(buf[off[4]], 0);
    ck_assert_int_eq(memcmp(buf + off[1], blob + off[1], 8), 0);
    /* a slot whose bytes are not the call's value: identical-only */
    w2[1].val = 0x7f0000002010;
    ck_assert_int_eq(fp_slotmap_build(w2, 5, off, size, 7, blob, len, slots, &n), FP_MAP_IDENT);
    /* a size that is not the class's width: identical-only */
    size[2] = 8;
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, len, slots, &n), FP_MAP_IDENT);
    /* scratch set: never replayed */
    block(off, size, blob, &len, 0x5000);
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, len, slots, &n), FP_MAP_SCRATCH);
    /* another parameter count: not a block the memo understands */
    block(off, size, blob, &len, 0);
    ck_assert_int_eq(fp_slotmap_build(w, 4, off, size, 7, blob, len, slots, &n), FP_MAP_BAD);
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, len - 4, slots, &n), FP_MAP_BAD);
    /* annotated parameters (value in the key) are not slots */
    w[2].spec = FP_S_FIXED;
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, len, slots, &n), FP_MAP_VALUE);
    ck_assert_uint_eq(n, 4);
}
END_TEST

/* Slots come widest first whatever the parameter order (fp_slots_patch
 * writes each width's run without a per-slot test), and still patch right. */
START_TEST(slot_map_orders_slots_by_width)
{
    /* (b u1, n i32, x*, m i32, y*, 2 scratch) at offsets 0, 4, 8, 16, 24, 32, 40 */
    uint32_t off[7] = {0, 4, 8, 16, 24, 32, 40}, size[7] = {1, 4, 8, 4, 8, 8, 8};
    unsigned char blob[48] = {0}, buf[48];
    struct fp_want w[5] = {{.spec = FP_S_U1, .arg = 0, .val = 1},
                           {.spec = FP_S_I32, .arg = 1, .val = 7},
                           {.spec = FP_S_PTR, .arg = 2, .val = 0x7f0000001000},
                           {.spec = FP_S_I32, .arg = 3, .val = 9},
                           {.spec = FP_S_PTR, .arg = 4, .val = 0x7f0000002000}};
    for (unsigned i = 0; i < 5; i++)
        memcpy(blob + off[i], &w[i].val, size[i]);
    struct fp_slot slots[8];
    unsigned n;
    ck_assert_int_eq(fp_slotmap_build(w, 5, off, size, 7, blob, sizeof blob, slots, &n), FP_MAP_VALUE);
    ck_assert_uint_eq(n, 5);
    unsigned want[5] = {2, 4, 1, 3, 0};
    for (unsigned i = 0; i < 5; i++)
        ck_assert_uint_eq(slots[i].want, want[i]);
    struct fp_want w2[5];
    memcpy(w2, w, sizeof w);
    w2[0].val = 0;
    w2[1].val = (uint32_t)-3;
    w2[2].val = 0x7f0000005000;
    w2[3].val = 11;
    w2[4].val = 0x7f0000006000;
    memset(buf, 0xee, sizeof buf);
    fp_slots_patch(buf, slots, n, w2);
    for (unsigned i = 0; i < 5; i++) {
        uint64_t got = 0, mask = size[i] == 8 ? ~0ull : (1ull << (8 * size[i])) - 1;
        memcpy(&got, buf + off[i], size[i]);
        ck_assert_uint_eq(got, w2[i].val & mask);
    }
    ck_assert_uint_eq(buf[1], 0xee); /* padding untouched */
}
END_TEST

static struct fp_entry *entry(unsigned i)
{
    static struct fp_key k;
    fp_key_reset(&k);
    fp_key_u64(&k, i);
    fp_key_u64(&k, 0x1234);
    fp_key_finish(&k);
    struct fp_entry *e = fp_entry_new(&k, 3, 24, 1, 2, 1);
    ck_assert_ptr_nonnull(e);
    e->blob[0] = (unsigned char)i;
    return e;
}

static struct fp_key *key_of(unsigned i)
{
    static struct fp_key k;
    fp_key_reset(&k);
    fp_key_u64(&k, i);
    fp_key_u64(&k, 0x1234);
    fp_key_finish(&k);
    return &k;
}

START_TEST(memo_is_bounded_and_evicts_by_clock)
{
    struct fp_memo m;
    ck_assert_int_eq(fp_memo_init(&m, 8), 0);
    for (unsigned i = 0; i < 8; i++)
        ck_assert_ptr_null(fp_memo_insert(&m, entry(i)));
    ck_assert_uint_eq(m.n, 8);
    for (unsigned i = 0; i < 8; i++)
        ck_assert_ptr_nonnull(fp_memo_find(&m, key_of(i)));
    /* all referenced: the hand clears bits, then takes the first */
    struct fp_entry *out = fp_memo_insert(&m, entry(100));
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(m.n, 8);
    ck_assert_ptr_null(fp_memo_find(&m, &(struct fp_key){0}) /* never matches */);
    unsigned gone = out->blob[0];
    free(out);
    ck_assert_ptr_null(fp_memo_find(&m, key_of(gone)));
    /* a hot entry survives a stream of cold ones */
    for (unsigned i = 200; i < 1200; i++) {
        ck_assert_ptr_nonnull(fp_memo_find(&m, key_of(100)));
        free(fp_memo_insert(&m, entry(i)));
        ck_assert_uint_le(m.n, 8);
    }
    ck_assert_ptr_nonnull(fp_memo_find(&m, key_of(100)));
    /* same key: replaced, the old one handed back */
    struct fp_entry *again = entry(100);
    out = fp_memo_insert(&m, again);
    ck_assert_ptr_nonnull(out);
    ck_assert_ptr_ne(out, again);
    free(out);
    ck_assert_ptr_eq(fp_memo_find(&m, key_of(100)), again);
    /* remove keeps the ring dense */
    fp_memo_remove(&m, again);
    free(again);
    ck_assert_uint_eq(m.n, 7);
    ck_assert_ptr_null(fp_memo_find(&m, key_of(100)));
    fp_memo_clear(&m, (void (*)(struct fp_entry *))free);
    ck_assert_uint_eq(m.n, 0);
    free(m.ring);
    free(m.buckets);
}
END_TEST

START_TEST(memo_pins_and_zero_capacity)
{
    struct fp_memo m;
    ck_assert_int_eq(fp_memo_init(&m, 2), 0);
    struct fp_entry *a = entry(1), *b = entry(2);
    fp_memo_insert(&m, a);
    fp_memo_insert(&m, b);
    a->pins = b->pins = 1;
    struct fp_entry *c = entry(3);
    ck_assert_ptr_eq(fp_memo_insert(&m, c), c); /* everything pinned: not stored */
    free(c);
    b->pins = 0;
    c = entry(3);
    struct fp_entry *out = fp_memo_insert(&m, c);
    ck_assert_ptr_eq(out, b); /* the unpinned one goes */
    free(b);
    fp_memo_clear(&m, (void (*)(struct fp_entry *))free);
    free(m.ring);
    free(m.buckets);
    ck_assert_int_eq(fp_memo_init(&m, 0), 0);
    c = entry(4);
    ck_assert_ptr_eq(fp_memo_insert(&m, c), c);
    ck_assert_ptr_null(fp_memo_find(&m, key_of(4)));
    free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fastpath core");
    TCase *t = tcase_create("core");
    tcase_add_test(t, int_classes_follow_specialize_cc);
    tcase_add_test(t, key_bytes_text_and_overflow);
    tcase_add_test(t, slot_map_checks_every_slot);
    tcase_add_test(t, slot_map_orders_slots_by_width);
    tcase_add_test(t, memo_is_bounded_and_evicts_by_clock);
    tcase_add_test(t, memo_pins_and_zero_capacity);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
