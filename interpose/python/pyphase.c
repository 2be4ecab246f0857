#include "interpose/python/pyphase.h"

int trlat_pyphases_on;

static void add(uint64_t *acc, uint64_t ticks)
{
    TRLAT_WR(*acc, TRLAT_RD(*acc) + trlat_ticks_ns(ticks));
}

void trlat_pylib_close(struct trlat_tstate *ts)
{
    const struct trlat_rec *r = ts->py_rec;
    uint64_t t0 = ts->py_t0, m = ts->py_lib;
    ts->py_lib = 0;
    if (!r || !r->t0 || m < t0 || r->t0 < m)
        return; /* a record folded mid-call has left its entry time */
    struct trlat_kslot *s = trlat_kslot_get(ts, r->func);
    uint64_t w = trlat_rec_weight(r->site), ns = trlat_ticks_ns(m - t0) * w;
    TRLAT_WR(s->lib_calls, TRLAT_RD(s->lib_calls) + w);
    TRLAT_WR(s->lib_ns, TRLAT_RD(s->lib_ns) + ns);
    if (trlat_rec_site(r->site)) /* its site's share (none found: the kernel's only) */
        trlat_kslot_add_lib(s, trlat_rec_site(r->site), ns);
}

void trlat_pyphase_close(struct trlat_tstate *ts)
{
    const struct trlat_rec *r = ts->py_rec;
    uint64_t t0 = ts->py_t0, k = ts->ph[TRLAT_PHM_KEY], m = ts->ph[TRLAT_PHM_META], l = ts->ph[TRLAT_PHM_LAUNCHER];
    ts->ph_call = 0;
    /* a record folded mid-call has left its entry time: not split */
    if (!r || !r->t0 || !l || l < t0 || r->t0 < l)
        return;
    struct trlat_kslot *s = trlat_kslot_get(ts, r->func);
    TRLAT_WR(s->ph_calls, TRLAT_RD(s->ph_calls) + 1);
    add(&s->ph_ns[TRLAT_PH_BEFORE], l - t0);
    add(&s->ph_ns[TRLAT_PH_LAUNCHER], r->t0 - l);
    if (k && m && t0 <= k && k <= m && m <= l) {
        TRLAT_WR(s->ph_split, TRLAT_RD(s->ph_split) + 1);
        add(&s->ph_ns[TRLAT_PH_BIND], k - t0);
        add(&s->ph_ns[TRLAT_PH_CACHE], m - k);
        add(&s->ph_ns[TRLAT_PH_META], l - m);
    }
}
