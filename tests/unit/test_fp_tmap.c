/* Where a tensor map keeps its address (fastpath/tmap_learn.c): found only
 * when each address bit a replay may change moves exactly its own bit of
 * one uint64 that holds the address; the captured call's wants get the
 * offset, and the slot map writes the address there. Encoders written
 * here, one per way a driver might lay a map out. */
#include "fastpath/fp.h"
#include "tests/unit/check_main.h"

static int layout; /* how the encoders below keep the address */
enum { PLAIN0, PLAIN8, SHIFTED, HASHED, ONLY_LOW, UNALIGNED_OFF };
static unsigned calls;

static CUresult encode(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *addr, const cuuint64_t *dims,
                       const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *estrides,
                       CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
                       CUtensorMapFloatOOBfill oob)
{
    (void)strides, (void)estrides, (void)il, (void)l2, (void)oob;
    calls++;
    uint64_t a = (uint64_t)(uintptr_t)addr, w[16] = {0};
    if ((a & 15) || a >> 57)
        return CUDA_ERROR_INVALID_VALUE;
    if (layout == ONLY_LOW && a >> 40)
        return CUDA_ERROR_INVALID_VALUE; /* refuses the high bits a replay may set */
    w[1] = (uint64_t)dtype | (uint64_t)rank << 8 | (uint64_t)sw << 16;
    w[2] = dims[0];
    w[3] = box[0];
    unsigned char *b = (unsigned char *)w;
    switch (layout) {
    case PLAIN8:
        w[5] = a;
        break;
    case SHIFTED:
        w[0] = a >> 4; /* the address, but not as itself */
        break;
    case HASHED:
        w[0] = a;
        w[9] = a * 0x9e3779b97f4a7c15ull;
        break;
    case UNALIGNED_OFF:
        memcpy(b + 3, &a, 8);
        break;
    default:
        w[0] = a;
    }
    memcpy(map, w, sizeof w);
    return CUDA_SUCCESS;
}

static struct trlat_tmap_call call_at(uint64_t addr)
{
    struct trlat_tmap_call c = {.encode = encode, .addr = addr, .rank = 1, .dtype = 7, .swizzle = 3};
    c.dims[0] = 1024;
    c.box[0] = 64;
    c.estrides[0] = 1;
    return c;
}

START_TEST(address_found_where_the_encoder_keeps_it)
{
    struct trlat_tmap_call c = call_at(0x7f7790000000);
    layout = PLAIN0;
    calls = 0;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), 0);
    ck_assert_uint_eq(calls, 1 + 53 + 1); /* the map, each of bits 4..56, all at once */
    layout = PLAIN8;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), 40);
    layout = UNALIGNED_OFF;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), 3);
}
END_TEST

START_TEST(no_place_when_the_map_is_another_function_of_it)
{
    struct trlat_tmap_call c = call_at(0x7f7790000000);
    layout = SHIFTED;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), -1);
    layout = HASHED;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), -1);
    layout = ONLY_LOW; /* an address the encoder refuses: a replay must not make it */
    ck_assert_int_eq(fp_tmap_addr_offset(&c), -1);
    layout = PLAIN0;
    c.encode = NULL;
    ck_assert_int_eq(fp_tmap_addr_offset(&c), -1);
    c = call_at(0x7f7790000008); /* one the encoder refused in the first place */
    ck_assert_int_eq(fp_tmap_addr_offset(&c), -1);
}
END_TEST

START_TEST(wants_get_the_offset_and_the_slot_map_writes_there)
{
    /* (desc CUtensorMap, M i32, 2 scratch) at 0, 128, 136, 144 */
    uint32_t off[4] = {0, 128, 136, 144}, size[4] = {128, 4, 8, 8};
    _Alignas(64) unsigned char blob[152] = {0};
    uint64_t a = 0x7f7790001000;
    struct fp_capture *cap = calloc(1, sizeof *cap);
    ck_assert_ptr_nonnull(cap);
    layout = PLAIN8;
    cap->tmap[0] = call_at(a);
    cap->ntmap = 1;
    ck_assert_int_eq(encode((CUtensorMap *)blob, 7, 1, (void *)(uintptr_t)a, cap->tmap[0].dims, NULL, cap->tmap[0].box,
                            cap->tmap[0].estrides, 0, 3, 0, 0),
                     CUDA_SUCCESS);
    int32_t m = 16;
    memcpy(blob + 128, &m, 4);
    struct fp_want w[2] = {{.spec = FP_S_TMADDR, .sub = FP_TMAP_UNKNOWN, .arg = 0, .val = a},
                           {.spec = FP_S_I32, .arg = 1, .val = 16}};
    struct fp_slot slots[4];
    unsigned n;
    ck_assert_int_eq(fp_slotmap_build(w, 2, off, size, 4, blob, sizeof blob, slots, &n), FP_MAP_IDENT);
    fp_tmap_learn(cap, w, 2);
    ck_assert_uint_eq(w[0].sub, 40);
    ck_assert_int_eq(fp_tmap_keyed, 0);
    ck_assert_int_eq(fp_slotmap_build(w, 2, off, size, 4, blob, sizeof blob, slots, &n), FP_MAP_VALUE);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(slots[0].off, 40);
    ck_assert_uint_eq(slots[0].width, 8);
    /* a replay over another buffer is the map the encoder makes for it */
    uint64_t b = 0x7f77a0042ff0;
    _Alignas(64) unsigned char want[128], buf[152];
    encode((CUtensorMap *)want, 7, 1, (void *)(uintptr_t)b, cap->tmap[0].dims, NULL, cap->tmap[0].box,
           cap->tmap[0].estrides, 0, 3, 0, 0);
    memcpy(buf, blob, sizeof buf);
    w[0].val = b;
    fp_slots_patch(buf, slots, n, w);
    ck_assert_mem_eq(buf, want, 128);
    /* an encode that is not this want's, or a count that differs: unknown,
     * and the process keys addresses from then on */
    w[0] = (struct fp_want){.spec = FP_S_TMADDR, .sub = FP_TMAP_UNKNOWN, .val = a + 16};
    fp_tmap_learn(cap, w, 2);
    ck_assert_uint_eq(w[0].sub, FP_TMAP_UNKNOWN);
    ck_assert_int_eq(fp_tmap_keyed, 1);
    w[0].val = a;
    cap->ntmap = 2;
    fp_tmap_learn(cap, w, 2);
    ck_assert_uint_eq(w[0].sub, FP_TMAP_UNKNOWN);
    free(cap);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fastpath tensor maps");
    TCase *t = tcase_create("tmap");
    tcase_add_test(t, address_found_where_the_encoder_keeps_it);
    tcase_add_test(t, no_place_when_the_map_is_another_function_of_it);
    tcase_add_test(t, wants_get_the_offset_and_the_slot_map_writes_there);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
