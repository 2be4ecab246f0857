/* A few types' answers to a question about the type alone, kept while
 * the types are unchanged (fp_py.h, struct fp_typeans). GIL held. */
#include "fastpath/fp_py.h"

int fp_typeans_get(struct fp_typeans *c, void *t)
{
    if (!fpy.watchers)
        return -1;
    if (c->epoch != fpy.epoch) {
        for (unsigned i = 0; i < 8; i++) {
            trlat_py_drop(c->type[i]);
            c->type[i] = NULL;
        }
        c->epoch = fpy.epoch;
    }
    for (unsigned i = 0; i < 8; i++)
        if (c->type[i] == t)
            return c->ans[i];
    return -1;
}

int fp_typeans_put(struct fp_typeans *c, void *t, int ans)
{
    if (!fpy.watchers)
        return ans;
    unsigned i = c->next++ % 8;
    trlat_py_drop(c->type[i]);
    c->type[i] = fp_hold((PyObject *)t);
    c->ans[i] = (uint8_t)ans;
    fp_watch_type((PyObject *)t);
    return ans;
}
