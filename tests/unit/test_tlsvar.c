/* fastpath/torch/tlsvar.c on the stand-in libc10_cuda.so (tests/fake/fake_c10.c):
 * its target device, a local TLS symbol only the .symtab names, is found
 * and its per-thread address is the one the library's own code writes
 * (fake_c10_set_device(d, 1) sets it on the calling thread only); not in a
 * stripped copy, nor under another name or size. */
#include "fastpath/torch/tlsvar.h"
#include "tests/unit/check_main.h"

#include <dlfcn.h>
#include <pthread.h>

#define TARGET "_ZN3c104cudaL17targetDeviceIndexE"

static void *load(const char *dir)
{
    const char *b = getenv("BUILD");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fake/%s/libc10_cuda.so", b ? b : "build", dir);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(h != NULL, "%s: %s", path, dlerror());
    return h;
}

struct thread_arg {
    const struct trlat_tls_var *v;
    void (*set)(int, int);
    int8_t seen_before, seen_after;
    void *addr;
};

static void *other_thread(void *p)
{
    struct thread_arg *a = p;
    a->set(0, 0); /* touches the library's TLS on this thread: -1 there */
    volatile int8_t *t = trlat_tls_var_addr(a->v);
    a->addr = (void *)t;
    if (t) {
        a->seen_before = *t;
        a->set(5, 1);
        a->seen_after = *t;
    }
    return NULL;
}

START_TEST(finds_the_target_device)
{
    void *h = load("c10");
    void (*set)(int, int) = (void (*)(int, int))dlsym(h, "fake_c10_set_device");
    ck_assert_ptr_nonnull(set);
    struct trlat_tls_var v;
    ck_assert_int_eq(trlat_tls_var_find(h, TARGET, 1, &v), 0);
    set(0, 0);
    volatile int8_t *t = trlat_tls_var_addr(&v);
    ck_assert_ptr_nonnull((void *)t);
    ck_assert_int_eq(*t, -1);
    set(3, 1);
    ck_assert_int_eq(*t, 3);
    set(1, 0);
    ck_assert_int_eq(*t, -1);
    set(2, 1);
    /* another thread: its own instance, this thread's untouched */
    struct thread_arg a = {&v, set, 0, 0, NULL};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, other_thread, &a), 0);
    pthread_join(th, NULL);
    ck_assert_ptr_nonnull(a.addr);
    ck_assert_ptr_ne(a.addr, (void *)t);
    ck_assert_int_eq(a.seen_before, -1);
    ck_assert_int_eq(a.seen_after, 5);
    ck_assert_int_eq(*t, 2);
}
END_TEST

START_TEST(not_found)
{
    void *h = load("c10");
    struct trlat_tls_var v;
    ck_assert_int_eq(trlat_tls_var_find(h, TARGET, 4, &v), -1); /* another size */
    ck_assert_int_eq(trlat_tls_var_find(h, "_ZN3c104cudaL17targetDeviceIndexX", 1, &v), -1);
    ck_assert_int_eq(trlat_tls_var_find(h, "_ZN3c104cudaL17targetDevice", 1, &v), -1); /* a prefix */
    ck_assert_int_eq(trlat_tls_var_find(h, "fake_c10_calls", 8, &v), -1);              /* not TLS */
    ck_assert_ptr_null(trlat_tls_var_addr(&v));
    void *s = load("c10-stripped");
    ck_assert_int_eq(trlat_tls_var_find(s, TARGET, 1, &v), -1);
    void *self = dlopen(NULL, RTLD_NOW); /* the program: no file name to read */
    ck_assert_int_eq(trlat_tls_var_find(self, TARGET, 1, &v), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tlsvar");
    TCase *tc = tcase_create("tlsvar");
    tcase_add_test(tc, finds_the_target_device);
    tcase_add_test(tc, not_found);
    suite_add_tcase(s, tc);
    return s;
}

TRLAT_CHECK_MAIN(suite)
