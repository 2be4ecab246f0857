#include "interpose/region.h"
#include "interpose/log.h"
#include "interpose/tstate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static char names[TRLAT_REGIONS_MAX][TRLAT_REGION_NAME];
static _Atomic unsigned nnames = 1; /* ids below are published */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* Names are compared as kept (truncated): two names alike in their first
 * TRLAT_REGION_NAME - 1 bytes are one region. */
static unsigned find(const char *name, unsigned n)
{
    for (unsigned i = 1; i < n; i++)
        if (strncmp(names[i], name, TRLAT_REGION_NAME - 1) == 0)
            return i;
    return 0;
}

static unsigned intern(const char *name)
{
    unsigned id = find(name, atomic_load_explicit(&nnames, memory_order_acquire));
    if (id)
        return id;
    pthread_mutex_lock(&names_lock);
    unsigned n = atomic_load_explicit(&nnames, memory_order_relaxed);
    if (!(id = find(name, n))) {
        if (n < TRLAT_REGION_OTHER) {
            id = n;
            strncpy(names[id], name, TRLAT_REGION_NAME - 1);
            atomic_store_explicit(&nnames, n + 1, memory_order_release);
        } else {
            static atomic_flag once;
            trlat_log_once(&once, "more than %d region names; the rest are counted as \"(other regions)\"",
                           TRLAT_REGION_OTHER - 1);
            id = TRLAT_REGION_OTHER;
        }
    }
    pthread_mutex_unlock(&names_lock);
    return id;
}

const char *trlat_region_name(unsigned id)
{
    if (id == TRLAT_REGION_OTHER)
        return "(other regions)";
    return id && id < atomic_load_explicit(&nnames, memory_order_acquire) ? names[id] : NULL;
}

static void set_current(struct trlat_tstate *ts)
{
    struct trlat_region_state *rs = ts->rs;
    uint32_t d = rs->depth < TRLAT_REGION_DEPTH ? rs->depth : TRLAT_REGION_DEPTH;
    ts->region = d ? (uint64_t)rs->stack[d - 1] << TRLAT_REC_REGION_SHIFT : 0;
}

int trlat_region_push(const char *name)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    if (!ts || !name)
        return -1;
    if (!ts->rs) {
        /* published for the fold: it only reads stats through TRLAT_RD */
        struct trlat_region_state *rs = calloc(1, sizeof *rs);
        if (!rs) {
            static atomic_flag once;
            trlat_log_once(&once, "out of memory for a thread's regions; its launches are not grouped by region");
            return -1;
        }
        __atomic_store_n(&ts->rs, rs, __ATOMIC_RELEASE);
    }
    struct trlat_region_state *rs = ts->rs;
    unsigned id = intern(name);
    if (rs->depth < TRLAT_REGION_DEPTH)
        rs->stack[rs->depth] = (uint16_t)id;
    rs->depth++;
    set_current(ts);
    return (int)rs->depth;
}

int trlat_region_pop(void)
{
    struct trlat_tstate *ts = trlat_tls;
    if (!ts || !ts->rs || !ts->rs->depth)
        return -1;
    ts->rs->depth--;
    set_current(ts);
    return (int)ts->rs->depth;
}

void trlat_region_add(struct trlat_rstat *s, const struct trlat_rec_ns *ns)
{
    TRLAT_WR(s->launches, TRLAT_RD(s->launches) + 1);
    TRLAT_WR(s->driver_ns, TRLAT_RD(s->driver_ns) + ns->driver);
    TRLAT_WR(s->gap_ns, TRLAT_RD(s->gap_ns) + ns->gap);
    TRLAT_WR(s->py_ns, TRLAT_RD(s->py_ns) + ns->py);
    TRLAT_WR(s->ret_ns, TRLAT_RD(s->ret_ns) + ns->ret);
}

void trlat_region_reset(struct trlat_tstate *ts)
{
    if (ts->rs)
        ts->rs->depth = 0;
    ts->region = 0;
}
