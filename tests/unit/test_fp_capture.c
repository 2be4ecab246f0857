/* Capture: the block of the one launch a Python call made (config,
 * attributes, parameter bytes sized by cuFuncGetParamInfo), nothing for
 * zero or several launches or for launches Triton's launcher would not
 * make; and the TRLAT_FASTPATH_LOG line. Runs on the fake driver. */
#include "fastpath/fp.h"
#include "interpose/python/pyhook.h"
#include "interpose/launch.h"
#include "interpose/names.h"
#include "report/fold.h"
#include "tests/unit/check_main.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static CUfunction (*fake_function)(const char *);
static int (*fake_set_params)(CUfunction, unsigned, const unsigned *);

static void load_fake(void)
{
    const char *b = getenv("BUILD");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fake/libcuda.so.1", b && *b ? b : "build");
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    ck_assert_msg(h != NULL, "%s", dlerror());
    fake_function = (CUfunction(*)(const char *))dlsym(h, "fake_cuda_function");
    fake_set_params = (int (*)(CUfunction, unsigned, const unsigned *))dlsym(h, "fake_cuda_set_params");
    ck_assert(fake_function && fake_set_params);
}

/* nop_with_args-like: 2 pointers, an i32, an fp32, then the two scratch pointers */
static CUfunction kernel(const char *name)
{
    CUfunction f = fake_function(name);
    unsigned sizes[] = {8, 8, 4, 4, 8, 8};
    ck_assert_int_eq(fake_set_params(f, 6, sizes), 0);
    return f;
}

struct args {
    uint64_t x, y;
    int32_t n;
    float f;
    uint64_t gs, ps;
    void *p[6];
};

static void args_init(struct args *a)
{
    a->x = 0x7f0000001000;
    a->y = 0x7f0000002000;
    a->n = 77;
    a->f = 2.5f;
    a->gs = a->ps = 0;
    void *p[6] = {&a->x, &a->y, &a->n, &a->f, &a->gs, &a->ps};
    memcpy(a->p, p, sizeof p);
}

static struct trlat_launch launch_of(CUfunction f, const CUlaunchConfig *cfg, struct args *a)
{
    struct trlat_launch l = {.fn = TRLAT_FN_cuLaunchKernelEx, .func = f, .config = cfg, .params = a->p};
    return l;
}

START_TEST(one_launch_is_copied_whole)
{
    load_fake();
    CUfunction f = kernel("cap_one");
    struct args a;
    args_init(&a);
    CUlaunchAttribute at[2] = {0};
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[0].value.clusterDim.x = 2;
    at[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    at[1].value.cooperative = 1;
    CUlaunchConfig cfg = {.gridDimX = 8,
                          .gridDimY = 2,
                          .gridDimZ = 1,
                          .blockDimX = 128,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .sharedMemBytes = 4096,
                          .attrs = at,
                          .numAttrs = 2};
    static struct fp_capture c;
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    ck_assert(fp_capturing());
    struct trlat_launch l = launch_of(f, &cfg, &a);
    fp_capture_launch(&c, &l);
    fp_capture_end(&c);
    ck_assert(!fp_capturing());
    ck_assert_uint_eq(c.launches, 1);
    ck_assert(c.ok);
    ck_assert_ptr_eq(c.func, f);
    ck_assert_uint_eq(c.pi.n, 6);
    ck_assert_uint_eq(c.pi.blob_len, 40);
    ck_assert_uint_eq(c.cfg.gridDimX, 8);
    ck_assert_uint_eq(c.cfg.sharedMemBytes, 4096);
    ck_assert_uint_eq(c.cfg.numAttrs, 2);
    ck_assert_ptr_null(c.cfg.attrs); /* the copy keeps its attributes in c.attrs */
    ck_assert_uint_eq(c.attrs[0].value.clusterDim.x, 2);
    ck_assert_int_eq(c.attrs[1].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    int32_t n;
    memcpy(&n, c.blob + c.pi.off[2], 4);
    ck_assert_int_eq(n, 77);
    ck_assert_int_eq(memcmp(c.blob + c.pi.off[1], &a.y, 8), 0);
    ck_assert_ptr_nonnull(c.ctx);
}
END_TEST

START_TEST(zero_two_or_foreign_launches_give_no_block)
{
    load_fake();
    CUfunction f = kernel("cap_two");
    struct args a;
    args_init(&a);
    CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
    static struct fp_capture c, inner;
    /* zero */
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    fp_capture_end(&c);
    ck_assert_uint_eq(c.launches, 0);
    ck_assert(!c.ok);
    /* two */
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    ck_assert_int_eq(fp_capture_begin(&inner), -1); /* one capture per thread */
    struct trlat_launch l = launch_of(f, &cfg, &a);
    fp_capture_launch(&c, &l);
    ck_assert(c.ok);
    fp_capture_launch(&c, &l);
    fp_capture_end(&c);
    ck_assert_uint_eq(c.launches, 2);
    ck_assert(!c.ok);
    /* failed, legacy cuLaunchKernel, per-thread stream, extra: not Triton's launch */
    struct trlat_launch bad[4] = {l, l, l, l};
    bad[0].rc = CUDA_ERROR_INVALID_VALUE;
    bad[1].fn = TRLAT_FN_cuLaunchKernel;
    bad[1].config = NULL;
    bad[2].fn = TRLAT_FN_cuLaunchKernelEx_ptsz;
    void *extra[1] = {NULL};
    bad[3].extra = extra;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(fp_capture_begin(&c), 0);
        fp_capture_launch(&c, &bad[i]);
        fp_capture_end(&c);
        ck_assert_uint_eq(c.launches, 1);
        ck_assert_msg(!c.ok, "case %d", i);
    }
    /* a function the driver knows no parameters of */
    CUfunction g = fake_function("cap_noinfo");
    l.func = g;
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    fp_capture_launch(&c, &l);
    fp_capture_end(&c);
    ck_assert(c.ok);
    ck_assert_uint_eq(c.pi.n, 0);
}
END_TEST

/* torch's static launcher's cuLaunchKernel (and its _ptsz twin): copied
 * only when the capture asks for it, its config made from the call's
 * grid, block, shared memory and stream, and where it was made noted. */
START_TEST(legacy_launch_copied_when_asked)
{
    load_fake();
    CUfunction f = kernel("cap_legacy");
    struct args a;
    args_init(&a);
    struct trlat_launch l = {.fn = TRLAT_FN_cuLaunchKernel,
                             .func = f,
                             .grid = {5, 2, 1},
                             .block = {256, 1, 1},
                             .shmem = 1024,
                             .stream = (CUstream)0x1234,
                             .params = a.p};
    static struct fp_capture c;
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    fp_capture_launch(&c, &l);
    fp_capture_end(&c);
    ck_assert(!c.ok); /* the Triton layers' captures take cuLaunchKernelEx alone */
    for (int ptsz = 0; ptsz < 2; ptsz++) {
        l.fn = ptsz ? TRLAT_FN_cuLaunchKernel_ptsz : TRLAT_FN_cuLaunchKernel;
        ck_assert_int_eq(fp_capture_begin(&c), 0);
        c.legacy_ok = 1;
        fp_capture_launch(&c, &l);
        fp_capture_end(&c);
        ck_assert(c.ok);
        ck_assert_int_eq(c.api, ptsz ? FP_API_LEGACY_PTSZ : FP_API_LEGACY);
        ck_assert_uint_eq(c.cfg.gridDimX, 5);
        ck_assert_uint_eq(c.cfg.gridDimY, 2);
        ck_assert_uint_eq(c.cfg.blockDimX, 256);
        ck_assert_uint_eq(c.cfg.sharedMemBytes, 1024);
        ck_assert_ptr_eq(c.cfg.hStream, (CUstream)0x1234);
        ck_assert_uint_eq(c.cfg.numAttrs, 0);
        ck_assert_int_eq(memcmp(c.blob + c.pi.off[0], &a.x, 8), 0);
    }
    /* a cuLaunchKernelEx launch under such a capture is still copied as one */
    CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
    struct trlat_launch ex = launch_of(f, &cfg, &a);
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    c.legacy_ok = 1;
    fp_capture_launch(&c, &ex);
    fp_capture_end(&c);
    ck_assert(c.ok);
    ck_assert_int_eq(c.api, FP_API_EX);
}
END_TEST

START_TEST(hook_captures_and_logs_real_launches)
{
    load_fake();
    char log[] = "/tmp/trlat-fplog-XXXXXX";
    int fd = mkstemp(log);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fp_capture_install(log);
    CUfunction f = kernel("cap_hook");
    struct args a;
    args_init(&a);
    CUlaunchConfig cfg = {.gridDimX = 3, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1};
    static struct fp_capture c;
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    ck_assert_int_eq(trlat_launch_ex(&cfg, f, a.p, NULL), CUDA_SUCCESS);
    fp_capture_end(&c);
    ck_assert_uint_eq(c.launches, 1);
    ck_assert(c.ok);
    ck_assert_uint_eq(c.cfg.gridDimX, 3);
    /* not capturing: the hook only logs */
    ck_assert_int_eq(trlat_launch_ex(&cfg, f, a.p, NULL), CUDA_SUCCESS);
    ck_assert_uint_eq(c.launches, 1);
    FILE *in = fopen(log, "r");
    char line[4096];
    int lines = 0;
    while (fgets(line, sizeof line, in)) {
        lines++;
        ck_assert_ptr_nonnull(strstr(line, "grid=3,1,1 block=64,1,1 shmem=0"));
        ck_assert_ptr_nonnull(strstr(line, "params=00100000007f0000|00200000007f0000|4d000000|00002040|"));
    }
    fclose(in);
    unlink(log);
    ck_assert_int_eq(lines, 2);
}
END_TEST

/* Without a launch log the hook is called only while its thread captures
 * (trlat_launch_hooks_want): the capture still sees the launch. */
START_TEST(hook_captures_without_a_log)
{
    load_fake();
    fp_capture_install(NULL);
    CUfunction f = kernel("cap_nolog");
    struct args a;
    args_init(&a);
    CUlaunchConfig cfg = {.gridDimX = 5, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
    static struct fp_capture c;
    ck_assert_int_eq(fp_capture_begin(&c), 0);
    ck_assert_ptr_nonnull(c.ts);
    ck_assert_uint_eq(c.ts->hooks_wanted, 1);
    ck_assert_int_eq(trlat_launch_ex(&cfg, f, a.p, NULL), CUDA_SUCCESS);
    fp_capture_end(&c);
    ck_assert_uint_eq(c.ts->hooks_wanted, 0);
    ck_assert_uint_eq(c.launches, 1);
    ck_assert(c.ok);
    ck_assert_uint_eq(c.cfg.gridDimX, 5);
    ck_assert_int_eq(trlat_launch_ex(&cfg, f, a.p, NULL), CUDA_SUCCESS);
    ck_assert_uint_eq(c.launches, 1);
}
END_TEST

/* TRLAT_TIMING=sampled: a fast-path hit left out of the sample opens its
 * Python call as untimed (trlat_sample_hit); that call's first launch, the
 * hit, is counted without times, any later launch of the call (not a hit)
 * is timed, through the wrapper's common variant and its slow one alike. */
START_TEST(unsampled_hit_times_its_calls_later_launches)
{
    load_fake();
    trlat_clock_init();
    CUfunction f = kernel("samp_later");
    trlat_names_add(f, "samp_later");
    struct args a;
    args_init(&a);
    CUlaunchConfig cfg = {.gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
    struct trlat_tstate *ts = trlat_tstate_get();
    for (int slow = 0; slow < 2; slow++) {
        if (slow)
            trlat_launch_hooks_want(ts, 1);
        struct trlat_pycall saved;
        trlat_pycall_open(ts, TRLAT_PY_UNTIMED, 9, &saved);
        for (int i = 0; i < 3; i++)
            ck_assert_int_eq(trlat_launch_ex(&cfg, f, a.p, NULL), CUDA_SUCCESS);
        ck_assert_uint_eq(trlat_pycall_close(ts, &saved), 3);
        if (slow)
            trlat_launch_hooks_want(ts, -1);
    }
    struct trlat_fold *fo = trlat_fold_build();
    struct trlat_kstats *k = trlat_fold_kernel(fo, "samp_later");
    ck_assert_uint_eq(k->from_driver, 6);
    ck_assert_uint_eq(k->driver.count, 4); /* the second and third of each call */
    ck_assert_uint_eq(k->gap.count, 2);    /* the third from the second */
    ck_assert_uint_eq(k->py.count, 0);
    ck_assert_uint_eq(k->ret.count, 0);
    ck_assert_uint_eq(k->sites[0].launches, 6);
    trlat_fold_free(fo);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fastpath capture");
    TCase *t = tcase_create("capture");
    tcase_add_test(t, one_launch_is_copied_whole);
    tcase_add_test(t, zero_two_or_foreign_launches_give_no_block);
    tcase_add_test(t, legacy_launch_copied_when_asked);
    tcase_add_test(t, hook_captures_and_logs_real_launches);
    tcase_add_test(t, hook_captures_without_a_log);
    tcase_add_test(t, unsampled_hit_times_its_calls_later_launches);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
