/* The fast path's part of the report: each kernel's hits, misses and
 * fallbacks by reason (fastpath/fastpath.h), added to the fold before it is
 * sorted. With the fast path on every kernel has the object (zeros for
 * kernels Triton did not launch: docs/REPORT.md). */
#include "report/sections.h"
#include "fastpath/fastpath.h"
#include "interpose/tstate.h"
#include "report/json.h"

#include <string.h>

static void add(struct trlat_kstats *k, const struct trlat_fastpath_counts *c)
{
    k->has_fastpath = 1;
    k->fastpath.hits += c->hits;
    k->fastpath.misses += c->misses;
    k->fastpath.library_hits += c->library_hits;
    for (int r = 0; r < c->nreasons; r++) {
        uint64_t n = TRLAT_RD(c->reasons[r]);
        if (!n)
            continue;
        int i = 0;
        while (i < k->fastpath.nreasons && strcmp(k->fastpath.reasons[i], c->reason_names[r]) != 0)
            i++;
        if (i == k->fastpath.nreasons) {
            if (i == (int)(sizeof k->fastpath.counts / sizeof k->fastpath.counts[0]))
                continue; /* more distinct reasons than the report keeps */
            k->fastpath.reasons[i] = c->reason_names[r];
            k->fastpath.nreasons++;
        }
        k->fastpath.counts[i] += n;
    }
}

static int any(const struct trlat_fastpath_counts *c)
{
    uint64_t a = c->hits | c->misses | c->library_hits;
    for (int r = 0; r < c->nreasons; r++)
        a |= TRLAT_RD(c->reasons[r]);
    return a != 0;
}

void trlat_fastpath_section_fold(struct trlat_fold *f)
{
    if (!trlat_fastpath_on())
        return;
    struct trlat_fastpath_counts c;
    for (unsigned i = 0; trlat_fastpath_counts(i, &c); i++) {
        if (!any(&c))
            continue; /* e.g. a JITFunction only ever seen before a fork */
        struct trlat_kstats *k = trlat_fold_kernel(f, c.name);
        if (k)
            add(k, &c);
    }
    for (size_t i = 0; i < f->n; i++)
        f->k[i]->has_fastpath = 1;
}

void trlat_fastpath_section_config(struct trlat_json *j)
{
    const char *reason, *state = trlat_fastpath_state(&reason);
    trlat_json_str(j, "fastpath_state", state ? state : "off");
    trlat_json_str(j, "fastpath_reason", reason);
}
