/* Native call sites: the per-return-address cache, unwinding past trlat's
 * own frames (here the test program holds trlat's objects, so it plays
 * libtrlat.so), and the lib!symbol+0xoff text. */
#include "interpose/native_site.h"
#include "report/sites.h"
#include "tests/unit/check_main.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern const int trlat_stacks_unwind __attribute__((weak)); /* defined when built with libunwind */

static const void *object_of(uintptr_t p)
{
    Dl_info info;
    return dladdr((void *)p, &info) ? info.dli_fbase : NULL;
}

__attribute__((noinline)) static uint64_t inner(void)
{
    uint64_t r = trlat_native_site(__builtin_return_address(0));
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) static uint64_t outer(void)
{
    uint64_t r = inner();
    __asm__ volatile("" ::: "memory");
    return r;
}

START_TEST(foreign_return_address_is_the_site)
{
    uintptr_t libc_addr = (uintptr_t)dlsym(RTLD_DEFAULT, "strlen") + 3;
    ck_assert_uint_eq(trlat_native_site((void *)libc_addr), libc_addr);
    ck_assert_uint_eq(trlat_native_site((void *)libc_addr), libc_addr); /* cached */
    ck_assert_uint_eq(trlat_native_site(NULL), 0);
}
END_TEST

START_TEST(unwinds_past_own_frames)
{
    if (!&trlat_stacks_unwind) {
        ck_assert_uint_ne(outer(), 0);
        return;
    }
    uint64_t site = outer();
    ck_assert_ptr_nonnull(object_of(site));
    /* the first frame outside "libtrlat" (this program): Check's runner or libc */
    ck_assert_ptr_ne(object_of(site), object_of((uintptr_t)outer));
    ck_assert_uint_eq(outer(), site); /* cached per return address */
}
END_TEST

START_TEST(cache_is_bounded)
{
    uintptr_t base = (uintptr_t)dlsym(RTLD_DEFAULT, "printf");
    for (uintptr_t i = 1; i <= 10000; i++)
        ck_assert_uint_eq(trlat_native_site((void *)(base + i)), base + i);
}
END_TEST

START_TEST(text_names_static_functions)
{
    char buf[512];
    const char *t = trlat_native_site_text((uint64_t)(uintptr_t)outer + 5, buf, sizeof buf);
    ck_assert_msg(strstr(t, "!outer+0x5") != NULL, "got %s", t);
    uintptr_t s = (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"); /* an exported name of libc */
    t = trlat_native_site_text(s + 2, buf, sizeof buf);
    ck_assert_msg(strstr(t, "libc.so") && strstr(t, "!getpid+0x2"), "got %s", t);
    t = trlat_native_site_text(0x10, buf, sizeof buf);
    ck_assert_str_eq(t, "0x10");
    char small[8];
    ck_assert_uint_le(strlen(trlat_native_site_text((uint64_t)(uintptr_t)outer + 5, small, sizeof small)), 7);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stacks");
    TCase *tc = tcase_create("stacks");
    tcase_add_test(tc, foreign_return_address_is_the_site);
    tcase_add_test(tc, unwinds_past_own_frames);
    tcase_add_test(tc, cache_is_bounded);
    tcase_add_test(tc, text_names_static_functions);
    suite_add_tcase(s, tc);
    return s;
}

TRLAT_CHECK_MAIN(suite)
