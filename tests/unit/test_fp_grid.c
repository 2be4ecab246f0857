/* Grid programs' arithmetic (fastpath/gridop.c): Python's int operators on
 * int64, and "cannot say" wherever Python would raise or leave int64 (the
 * grid function is then called). Expected values are Python's. And the
 * closure-cell guard (fastpath/gridprog.c), on stand-in objects with
 * CPython's layout: a tuple of cells read through the API table. */
#include "fastpath/fp_py.h"
#include "tests/unit/check_main.h"

#include <stdint.h>

#define OK(op, a, b, want)                               \
    do {                                                 \
        int64_t r_ = 12345;                              \
        ck_assert_int_eq(fp_gop_eval(op, a, b, &r_), 0); \
        ck_assert_int_eq(r_, want);                      \
    } while (0)
#define NO(op, a, b)                                      \
    do {                                                  \
        int64_t r_;                                       \
        ck_assert_int_eq(fp_gop_eval(op, a, b, &r_), -1); \
    } while (0)

START_TEST(floor_division_and_modulo_follow_python)
{
    /* -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1 */
    OK(FP_G_FLOORDIV, 7, 2, 3);
    OK(FP_G_FLOORDIV, -7, 2, -4);
    OK(FP_G_FLOORDIV, 7, -2, -4);
    OK(FP_G_FLOORDIV, -7, -2, 3);
    OK(FP_G_FLOORDIV, -6, 2, -3);
    OK(FP_G_MOD, 7, 2, 1);
    OK(FP_G_MOD, -7, 2, 1);
    OK(FP_G_MOD, 7, -2, -1);
    OK(FP_G_MOD, -7, -2, -1);
    OK(FP_G_MOD, -6, 3, 0);
    OK(FP_G_FLOORDIV, INT64_MIN, 1, INT64_MIN);
    OK(FP_G_MOD, INT64_MIN, -1, 0);
    OK(FP_G_FLOORDIV, INT64_MIN, 2, INT64_MIN / 2);
    OK(FP_G_FLOORDIV, INT64_MAX, -1, -INT64_MAX);
    OK(FP_G_MOD, -1, INT64_MAX, INT64_MAX - 1);
    NO(FP_G_FLOORDIV, 1, 0); /* ZeroDivisionError */
    NO(FP_G_MOD, 1, 0);
    NO(FP_G_FLOORDIV, INT64_MIN, -1); /* 2**63 */
    /* triton.cdiv(n, 1024) = (n + 1023) // 1024 */
    OK(FP_G_FLOORDIV, 4096 + 1023, 1024, 4);
    OK(FP_G_FLOORDIV, 4097 + 1023, 1024, 5);
}
END_TEST

START_TEST(shifts_and_bits_follow_python)
{
    OK(FP_G_RSHIFT, -1, 1, -1); /* arithmetic */
    OK(FP_G_RSHIFT, -5, 1, -3); /* floor(-5 / 2) */
    OK(FP_G_RSHIFT, 5, 100, 0);
    OK(FP_G_RSHIFT, -5, 100, -1);
    OK(FP_G_RSHIFT, INT64_MIN, 63, -1);
    NO(FP_G_RSHIFT, 5, -1); /* ValueError: negative shift count */
    OK(FP_G_LSHIFT, 1, 62, (int64_t)1 << 62);
    OK(FP_G_LSHIFT, -1, 63, INT64_MIN);
    OK(FP_G_LSHIFT, 0, 1000, 0);
    OK(FP_G_LSHIFT, -3, 2, -12);
    NO(FP_G_LSHIFT, 1, 63); /* 2**63 */
    NO(FP_G_LSHIFT, 3, 62);
    NO(FP_G_LSHIFT, -3, 62);
    NO(FP_G_LSHIFT, 1, -1);
    OK(FP_G_AND, -8, 12, 8);
    OK(FP_G_OR, -8, 3, -5);
    OK(FP_G_XOR, -1, 5, -6);
    OK(FP_G_INV, 5, 0, -6);
    OK(FP_G_INV, INT64_MIN, 0, INT64_MAX);
    /* next_power_of_2(1000): n -= 1; n |= n >> 1 ... n += 1 */
    int64_t n = 999, t;
    for (int s = 1; s <= 32; s *= 2) {
        ck_assert_int_eq(fp_gop_eval(FP_G_RSHIFT, n, s, &t), 0);
        ck_assert_int_eq(fp_gop_eval(FP_G_OR, n, t, &n), 0);
    }
    ck_assert_int_eq(n + 1, 1024);
}
END_TEST

START_TEST(overflow_and_the_rest)
{
    OK(FP_G_ADD, INT64_MAX - 1, 1, INT64_MAX);
    NO(FP_G_ADD, INT64_MAX, 1);
    NO(FP_G_SUB, INT64_MIN, 1);
    OK(FP_G_SUB, -1, INT64_MAX, INT64_MIN);
    OK(FP_G_MUL, -4, (int64_t)1 << 61, INT64_MIN);
    NO(FP_G_MUL, 4, (int64_t)1 << 61);
    NO(FP_G_NEG, INT64_MIN, 0);
    OK(FP_G_NEG, INT64_MAX, 0, -INT64_MAX);
    OK(FP_G_MIN, -3, 2, -3);
    OK(FP_G_MAX, -3, 2, 2);
    NO(FP_G_CONST, 1, 1); /* not an operator */
    NO(99, 1, 1);
}
END_TEST

/* PyTupleObject and PyCellObject as far as the guard reads them (the tuple
 * through PyTuple_Size/PyTuple_GetItem, stood in for here). */
struct fake_tuple {
    struct trlat_pyhead h;
    Py_ssize_t n;
    PyObject *item[3];
};
struct fake_cell {
    struct trlat_pyhead h;
    PyObject *ref;
};
static char tuple_type, cell_type, other_type;

static Py_ssize_t fake_size(PyObject *t)
{
    return ((struct fake_tuple *)t)->n;
}

static PyObject *fake_get(PyObject *t, Py_ssize_t i)
{
    struct fake_tuple *x = (struct fake_tuple *)t;
    return i >= 0 && i < x->n ? x->item[i] : NULL;
}

START_TEST(cell_guard_reads_this_closure)
{
    fpy.t_tuple = &tuple_type;
    fpy.t_cell = &cell_type;
    trlat_py.PyTuple_Size = fake_size;
    trlat_py.PyTuple_GetItem = fake_get;
    struct trlat_pyhead mod = {1, &other_type}, other = {1, &other_type};
    struct fake_cell c0 = {{1, &cell_type}, (PyObject *)&mod}, c1 = {{1, &cell_type}, (PyObject *)&other},
                     empty = {{1, &cell_type}, NULL}, notcell = {{1, &other_type}, (PyObject *)&mod};
    struct fake_tuple cl = {{1, &tuple_type}, 2, {(PyObject *)&c0, (PyObject *)&c1}};
    PyObject *t = (PyObject *)&cl, *m = (PyObject *)&mod;
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, m), 1);
    ck_assert_int_eq(fp_gprog_cell_is(t, 1, m), 0); /* another object in that cell */
    ck_assert_int_eq(fp_gprog_cell_is(t, 1, (PyObject *)&other), 1);
    ck_assert_int_eq(fp_gprog_cell_is(t, 2, m), 0); /* past the closure */
    ck_assert_int_eq(fp_gprog_cell_is(t, -1, m), 0);
    ck_assert_int_eq(fp_gprog_cell_is(NULL, 0, m), 0); /* no closure */
    c0.ref = (PyObject *)&other;                       /* the cell rebound */
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, m), 0);
    cl.item[0] = (PyObject *)&empty; /* an empty cell */
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, m), 0);
    cl.item[0] = (PyObject *)&notcell; /* not a cell */
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, m), 0);
    cl.h.type = &other_type; /* not a tuple */
    cl.item[0] = (PyObject *)&c1;
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, (PyObject *)&other), 0);
    cl.h.type = &tuple_type;
    ck_assert_int_eq(fp_gprog_cell_is(t, 0, (PyObject *)&other), 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fastpath grid programs");
    TCase *t = tcase_create("gridop");
    tcase_add_test(t, floor_division_and_modulo_follow_python);
    tcase_add_test(t, shifts_and_bits_follow_python);
    tcase_add_test(t, overflow_and_the_rest);
    tcase_add_test(t, cell_guard_reads_this_closure);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
