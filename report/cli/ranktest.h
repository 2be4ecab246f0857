/* The Mann-Whitney U test, exact, for the small samples `trlat diff`
 * compares (a few runs per side). */
#ifndef TRLAT_CLI_RANKTEST_H
#define TRLAT_CLI_RANKTEST_H

#include <stddef.h>

/* One-sided p-value that b's values rank above a's no more than by chance:
 * the probability, with both samples from one distribution, of a U (pairs
 * with b above a, ties counting one half) at least the one observed.
 * NaN values are left out; 1 when either side has none. Exact for
 * na + nb <= CLI_RANK_MAX (beyond it, the extra values are left out). */
#define CLI_RANK_MAX 64
double cli_rank_p_greater(const double *a, size_t na, const double *b, size_t nb);

/* The smallest one-sided p-value na and nb values can give: 1/C(na+nb, na). */
double cli_rank_p_min(size_t na, size_t nb);

#endif
