/* Python's int operators on int64 for grid programs (gridprog.c): the
 * same results as CPython's longobject.c where they fit, else "cannot say"
 * so the grid function is called and Python decides (a big int, an error). */
#include "fastpath/fp.h"

int fp_gop_eval(int op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case FP_G_ADD:
        return __builtin_add_overflow(a, b, r) ? -1 : 0;
    case FP_G_SUB:
        return __builtin_sub_overflow(a, b, r) ? -1 : 0;
    case FP_G_MUL:
        return __builtin_mul_overflow(a, b, r) ? -1 : 0;
    case FP_G_FLOORDIV:
    case FP_G_MOD: {
        if (b == 0) /* ZeroDivisionError */
            return -1;
        if (b == -1) { /* C's INT64_MIN / -1 traps; Python: -a, remainder 0 */
            if (op == FP_G_MOD) {
                *r = 0;
                return 0;
            }
            if (a == INT64_MIN) /* 2**63 */
                return -1;
            *r = -a;
            return 0;
        }
        int64_t q = a / b, m = a % b;
        if (m != 0 && ((m < 0) != (b < 0))) { /* round toward -inf: the remainder takes b's sign */
            q--;
            m += b;
        }
        *r = op == FP_G_FLOORDIV ? q : m;
        return 0;
    }
    case FP_G_AND:
        *r = a & b;
        return 0;
    case FP_G_OR:
        *r = a | b;
        return 0;
    case FP_G_XOR:
        *r = a ^ b;
        return 0;
    case FP_G_LSHIFT:
        if (b < 0) /* ValueError: negative shift count */
            return -1;
        if (a == 0) {
            *r = 0;
            return 0;
        }
        if (b >= 64)
            return -1;
        /* exact when shifting back gives a again (no bits lost, sign kept) */
        {
            int64_t s = (int64_t)((uint64_t)a << b);
            if (s >> b != a)
                return -1;
            *r = s;
        }
        return 0;
    case FP_G_RSHIFT:
        if (b < 0)
            return -1;
        *r = b >= 63 ? (a < 0 ? -1 : 0) : a >> b; /* arithmetic: floor(a / 2**b) */
        return 0;
    case FP_G_MIN:
        *r = b < a ? b : a;
        return 0;
    case FP_G_MAX:
        *r = b > a ? b : a;
        return 0;
    case FP_G_NEG:
        if (a == INT64_MIN)
            return -1;
        *r = -a;
        return 0;
    case FP_G_INV:
        *r = ~a;
        return 0;
    default:
        return -1;
    }
}
