#include "report/cli/ranktest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Counts, over all C(m+n, m) orderings of m a's and n b's, how many have U
 * = u (pairs b above a) for each u in [0, m*n]: the recursion on whether
 * the largest value is an a (U unchanged) or a b (U + m). In doubles: the
 * counts reach C(64, 32). */
static double *u_counts(size_t m, size_t n)
{
    size_t umax = m * n;
    /* cur[j][u] for j b's so far, with i a's: rolled over i */
    double *t = calloc((n + 1) * (umax + 1), sizeof *t);
    if (!t)
        return NULL;
#define T(j, u) t[(j) * (umax + 1) + (u)]
    for (size_t j = 0; j <= n; j++)
        T(j, 0) = 1; /* i = 0: only b's, U = 0 */
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) /* a's i, b's j: the largest an a, or a b above i a's */
            for (size_t u = umax + 1; u-- > 0;)
                T(j, u) = T(j, u) + (u >= i ? T(j - 1, u - i) : 0);
    /* T(j, u) for i a's, j b's was updated in place from T(j, u) (i - 1
     * a's: the largest is an a) and T(j - 1, u - i) (i a's: a b, above
     * all i) */
    double *out = malloc((umax + 1) * sizeof *out);
    if (out)
        memcpy(out, &T(n, 0), (umax + 1) * sizeof *out);
#undef T
    free(t);
    return out;
}

static size_t keep_numbers(const double *v, size_t n, double *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        if (!isnan(v[i]))
            out[k++] = v[i];
    return k;
}

double cli_rank_p_greater(const double *a, size_t na, const double *b, size_t nb)
{
    double x[CLI_RANK_MAX], y[CLI_RANK_MAX];
    size_t m = keep_numbers(a, na, x, CLI_RANK_MAX / 2), n = keep_numbers(b, nb, y, CLI_RANK_MAX / 2);
    if (!m || !n)
        return 1;
    double u = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            u += y[j] > x[i] ? 1 : y[j] == x[i] ? 0.5 : 0;
    double *c = u_counts(m, n);
    if (!c)
        return 1;
    double all = 0, tail = 0;
    for (size_t k = 0; k <= m * n; k++) {
        all += c[k];
        if ((double)k >= u - 1e-9)
            tail += c[k];
    }
    free(c);
    return all > 0 ? tail / all : 1;
}

double cli_rank_p_min(size_t na, size_t nb)
{
    double c = 1; /* C(na + nb, na) */
    for (size_t i = 1; i <= na; i++)
        c = c * (double)(nb + i) / (double)i;
    return 1 / c;
}
