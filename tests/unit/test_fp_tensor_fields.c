/* fp_td_read on hand-built torch 2.11 structs: the offsets are the ones a
 * probe compiled against torch 2.11's headers printed (offsetof, and the
 * bits a bitfield store changed), written here as numbers so that a change
 * to tensor_direct.c's table shows up; every condition under which torch's
 * getters would not answer from these fields alone gives -1. */
#include "fastpath/fp.h"
#include "tests/unit/check_main.h"

#include <string.h>

static const char ti_vtable[32], si_vtable[32], other_vtable[32];

struct fake {
    _Alignas(16) unsigned char obj[32], impl[184], st[96];
    struct fp_td_layout lay;
};

static void put(unsigned char *p, size_t off, const void *v, size_t n)
{
    memcpy(p + off, v, n);
}

/* A float32 CUDA tensor on device 2: 64 elements at offset 3 of storage
 * at 0x7f0000001000. */
static void make(struct fake *f)
{
    memset(f, 0, sizeof *f);
    const void *p;
    p = f->impl;
    put(f->obj, 16, &p, 8); /* THPVariable.cdata */
    p = ti_vtable;
    put(f->impl, 0, &p, 8);
    p = f->st;
    put(f->impl, 16, &p, 8); /* storage_ */
    int64_t off = 3, numel = 64;
    put(f->impl, 152, &off, 8);
    put(f->impl, 160, &numel, 8);
    uint16_t dt = 6; /* float32's TypeMeta index */
    put(f->impl, 168, &dt, 2);
    f->impl[170] = 1; /* DeviceType::CUDA */
    f->impl[171] = 2;
    f->impl[172] = 1;    /* has_value */
    f->impl[173] = 0x01; /* is_contiguous_ */
    p = si_vtable;
    put(f->st, 0, &p, 8);
    uintptr_t data = 0x7f0000001000;
    put(f->st, 16, &data, 8);
    f->lay.ti_vptr = ti_vtable;
    f->lay.si_vptr = si_vtable;
    f->lay.itemsize[6] = 4;
}

static int fields_of(const struct fake *f, unsigned *idx, int *cuda, uint64_t *ptr)
{
    *idx = FP_TD_DTYPES;
    *cuda = -1;
    *ptr = 1;
    return fp_td_read(f->obj, &f->lay, idx, cuda, ptr);
}

START_TEST(plain_tensor_as_torch_computes_it)
{
    static struct fake f;
    make(&f);
    unsigned idx;
    int cuda;
    uint64_t ptr;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_uint_eq(idx, 6);
    ck_assert_int_eq(cuda, 1);
    ck_assert_uint_eq(ptr, 0x7f0000001000 + 3 * 4); /* data + itemsize * storage_offset */
    /* another itemsize, a CPU tensor, no device */
    f.lay.itemsize[6] = 2;
    f.impl[170] = 0;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_uint_eq(ptr, 0x7f0000001000 + 3 * 2);
    ck_assert_int_eq(cuda, 0);
    f.impl[170] = 1;
    f.impl[172] = 0;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_int_eq(cuda, 0);
    /* flags outside the policy mask do not matter */
    f.impl[172] = 1;
    f.impl[173] = 0xff;
    f.impl[174] = 0x63;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_int_eq(cuda, 1);
}
END_TEST

START_TEST(empty_tensor_is_null)
{
    static struct fake f;
    make(&f);
    int64_t zero = 0;
    put(f.impl, 160, &zero, 8);
    unsigned idx;
    int cuda;
    uint64_t ptr;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_uint_eq(ptr, 0); /* data_impl returns nullptr, offset or not */
    uintptr_t null = 0;
    put(f.st, 16, &null, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), 0);
    ck_assert_uint_eq(ptr, 0);
    int64_t one = 1; /* elements but no data: the getters decide (they raise) */
    put(f.impl, 160, &one, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
}
END_TEST

START_TEST(refuses_what_the_getters_would_not_read_from_fields)
{
    static struct fake f;
    unsigned idx;
    int cuda;
    uint64_t ptr;
    const void *p;

    make(&f); /* another TensorImpl class (sparse, nested, wrapper...) */
    p = other_vtable;
    put(f.impl, 0, &p, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
    ck_assert_uint_eq(idx, FP_TD_DTYPES);

    make(&f); /* another StorageImpl class */
    put(f.st, 0, &p, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);

    make(&f); /* no storage, no impl */
    memset(f.impl + 16, 0, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
    memset(f.obj + 16, 0, 8);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);

    make(&f); /* copy-on-write, throw or warn pending: data_ptr() would act */
    f.st[59] = 1;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);

    /* sizes_strides_policy_ (2 bits), has_symbolic_sizes_strides_, device_policy_ */
    static const unsigned char bits[] = {0x04, 0x08, 0x10, 0x80};
    for (unsigned i = 0; i < sizeof bits; i++) {
        make(&f);
        f.impl[174] = bits[i];
        ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
    }

    make(&f); /* a dtype not learned through the getters: its index, to learn it */
    f.lay.itemsize[6] = 0;
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
    ck_assert_uint_eq(idx, 6);
    uint16_t big = FP_TD_DTYPES;
    put(f.impl, 168, &big, 2);
    ck_assert_int_eq(fields_of(&f, &idx, &cuda, &ptr), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fp_tensor_fields");
    TCase *t = tcase_create("core");
    tcase_add_test(t, plain_tensor_as_torch_computes_it);
    tcase_add_test(t, empty_tensor_is_null);
    tcase_add_test(t, refuses_what_the_getters_would_not_read_from_fields);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
