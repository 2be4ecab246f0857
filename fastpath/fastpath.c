/* The launch memo behind fastpath.h: fp_before looks the call
 * up and replays on a hit; on a miss it marks the thread as capturing, and
 * fp_after stores the block the call launched (exactly one
 * launch, a normal return, the kernel found in Triton's cache). Also the
 * module: options at start, counters in the report, fork. */
#include "fastpath/fastpath.h"
#include "fastpath/fp_py.h"
#include "fastpath/phases.h"
#include "interpose/python/pyhook.h"
#include "interpose/config.h"
#include "interpose/log.h"
#include "interpose/lifecycle.h"

#include <stdlib.h>

struct fp_conf fp_conf;
struct fp_memo fp_memo;
static int forked;
/* The memo started in this process or the one it was forked from (a
 * forked child replays nothing, and reports its zeroed counters). */
static int started;

struct fp_state {
    struct fp_call c;
    struct fp_capture cap;
};

void fp_count(struct fp_layout *L, int what, int reason)
{
    fp_count_stat(L ? L->stat : fp_stat_get("(other)"), what, reason);
}

void fp_count_stat(struct fp_stat *s, int what, int reason)
{
    if (!s)
        return;
    if (what == FP_HIT)
        s->hits++;
    else if (what == FP_MISS)
        s->misses++;
    else if (reason >= 0 && reason < FP_R_COUNT)
        s->reasons[reason]++;
}

void fp_entry_free(struct fp_entry *e)
{
    if (!e)
        return;
    if (e->pins) {
        e->dead = 1;
        return;
    }
    PyObject *o[] = {e->kernel, e->kcache, e->kkey};
    for (unsigned i = 0; i < 3; i++)
        if (o[i])
            PY(Py_DecRef)(o[i]);
    for (uint32_t i = 0; i < e->nrefs; i++)
        PY(Py_DecRef)(e->refs[i]);
    free(e);
}

void fp_entry_unpin(struct fp_entry *e)
{
    if (--e->pins == 0 && e->dead)
        fp_entry_free(e);
}

/* Miss backoff. A kernel whose keyed calls keep missing (a memo too small
 * for its keys, arguments that never repeat, TRLAT_FASTPATH_MEMO=0) pays
 * for a key on every call and gains nothing: after FP_MISS_RUN misses in a
 * row its calls go to Triton unkeyed for a window, then one is keyed again
 * (a probe); each probe that misses doubles the window up to FP_WINDOW_MAX,
 * the first hit ends the backoff, and a probe whose launch was memoized
 * lets the next call be keyed too. A kernel that starts hitting again loses
 * at most the rest of one window. */
#define FP_MISS_RUN 64
#define FP_WINDOW_MIN 8
#define FP_WINDOW_MAX 1024

static int missed(struct fp_layout *L)
{
    if (L->window) { /* a probe missed */
        L->skip = L->window;
        if (L->window < FP_WINDOW_MAX)
            L->window *= 2;
    } else if (++L->miss_run >= FP_MISS_RUN) {
        L->skip = FP_WINDOW_MIN;
        L->window = 2 * FP_WINDOW_MIN;
    }
    return FP_MISS;
}

/* TRLAT_FASTPATH_DEBUG: memo hits found by the key; the rest of the hits
 * took a last hit's entry (lastcall.c), said at exit. Counted off the
 * shortcut's path. And whether call sites came from the running frame
 * (pyhook_site.c; said at exit, not when it switches on, so that it does
 * not take a line of the log's budget from what a run says as it goes). */
static uint64_t found_keyed;
uint64_t fp_found_launcher; /* the launcher memo's hits (compiled.c), under TRLAT_FASTPATH_DEBUG */

static void say_found(void)
{
    uint64_t hits = fp_stats_hits() - fp_found_launcher, last = hits > found_keyed ? hits - found_keyed : 0;
    if (fp_found_launcher)
        trlat_log_debug("fast path: %llu hits were compiled kernels' launches (the launcher memo)",
                        (unsigned long long)fp_found_launcher);
    if (fp_found_libentry || fp_found_libentry_first)
        trlat_log_debug("fast path: %llu calls of FlagGems' LibEntry.run were served in C (%llu with the grid its "
                        "grid function's program computed; %llu entries found as one of the last keys; %llu "
                        "data_ptr() reads of the key taken by the launch), and %llu of its first-call paths",
                        (unsigned long long)fp_found_libentry, (unsigned long long)fp_found_libentry_gprog,
                        (unsigned long long)fp_found_libentry_last, (unsigned long long)fp_found_ptrreads,
                        (unsigned long long)fp_found_libentry_first);
    if (hits)
        trlat_log_debug("fast path: %llu of %llu hits took one of their kernel's last %d hits' entries (no key built)",
                        (unsigned long long)last, (unsigned long long)hits, FP_LAST_N);
    unsigned agreed = trlat_pyhook_sites_direct();
    if (agreed)
        trlat_log_debug("Python call sites were read from the running interpreter frame (%u reads agreed with its "
                        "frame object first)",
                        agreed);
}

int fp_lookup(struct fp_call *c, struct fp_entry **out, int *reason)
{
    *out = NULL;
    struct fp_layout *L = c->L ? c->L : (c->L = fp_layout_get(c->jitfn));
    if (!L) {
        *reason = FP_R_TABLE;
        return FP_FALLBACK;
    }
    int r = L->bad;
    if (!r && c->warmup)
        r = FP_R_WARMUP;
    if (!r && L->skip) {
        L->skip--;
        r = FP_R_BACKOFF;
    }
    if (!r)
        r = fp_guards(L, c->getitem);
    fp_phase(FP_PH_GUARDS);
    if (!r)
        r = fp_call_key(c);
    fp_phase(FP_PH_KEY);
    struct fp_entry *e = r ? NULL : c->shortcut;
    if (e) {
        e->ref = 1; /* as fp_memo_find marks a hit */
        if (e->kind == FP_E_VALUE && fp_entry_current(e, c))
            goto hit;
        /* blocked by verify since, or Triton's cache changed: the full key,
         * which takes the usual way below (a miss stores under it) */
        fp_last_forget(L);
        c->shortcut = e = NULL;
        r = fp_call_key_build(c);
    }
    if (r) {
        *reason = r;
        return FP_FALLBACK;
    }
    e = fp_memo_find(&fp_memo, &c->key);
    if (!e)
        return missed(L);
    if (e->kind == FP_E_BLOCKED) {
        *reason = FP_R_BLOCKED;
        return FP_FALLBACK;
    }
    if (e->kind == FP_E_IDENT) {
        if (e->nwant != c->nwant)
            return missed(L);
        for (uint32_t i = 0; i < e->nwant; i++)
            if (e->ident[i] != c->want[i].val)
                return missed(L); /* a block that only replays for the values it was captured with */
    }
    if (!fp_entry_current(e, c)) {
        fp_memo_remove(&fp_memo, e); /* Triton would compile again */
        fp_entry_free(e);
        return missed(L);
    }
    fp_last_save(c, e);
    if (fp_conf.debug)
        found_keyed++;
hit:
    *out = e;
    L->miss_run = L->window = 0;
    fp_phase(FP_PH_MEMO);
    return FP_HIT;
}

PyObject *fp_serve(struct fp_call *c, struct fp_entry *e, int allow_raise, int *reason, PyObject **odd_grid)
{
    if (odd_grid)
        *odd_grid = NULL;
    *reason = FP_R_INTERNAL;
    if (!c->ctx_current && !fp_has_context()) {
        *reason = FP_R_CONTEXT; /* Triton's launcher would make the primary context current */
        return NULL;
    }
    e->pins++; /* Python code runs below (verify, a grid function) */
    PyObject *k = NULL;
    if (fp_conf.verify && fp_verify(e, c)) {
        e->kind = FP_E_BLOCKED;
        *reason = FP_R_VERIFY;
        goto out;
    }
    unsigned g[3];
    PyObject *odd = NULL;
    int r = fp_grid_eval(c, NULL, g, &odd);
    switch (r) {
    case FP_GRID_OK:
        break;
    case FP_GRID_RAISED:
        if (!allow_raise) /* Triton will call the grid again and raise */
            PY(PyErr_Clear)();
        *reason = FP_R_GRID; /* allow_raise: the error raised is the grid's */
        goto out;
    case FP_GRID_ODD:
    case FP_GRID_VERIFY:
        if (odd_grid)
            *odd_grid = odd; /* getitem hands this result to run(grid=...) */
        else
            PY(Py_DecRef)(odd);
        *reason = r == FP_GRID_VERIFY ? FP_R_VERIFY : FP_R_GRID;
        goto out;
    default:
        *reason = FP_R_GRID;
        goto out;
    }
    k = e->kernel;
    PY(Py_IncRef)(k);
    if ((uint64_t)g[0] * g[1] * g[2] == 0)
        goto out; /* Triton's launcher does not launch an empty grid */
    CUresult rc = fp_replay(e, c, g);
    if (rc != CUDA_SUCCESS) {
        PY(Py_DecRef)(k);
        k = NULL;
        if (allow_raise)
            fp_raise_launch_error(rc);
        *reason = FP_R_LAUNCH_ERROR; /* else Triton launches again and raises */
    }
out:
    fp_entry_unpin(e);
    return k;
}

void *fp_begin_capture(struct fp_call *c)
{
    if (!fp_memo.cap) { /* TRLAT_FASTPATH_MEMO=0: nothing would be stored */
        fp_count(c->L, FP_MISS, 0);
        return NULL;
    }
    struct fp_state *st = malloc(sizeof *st);
    if (!st) {
        fp_count(c->L, FP_FALLBACK, FP_R_INTERNAL);
        return NULL;
    }
    if (fp_capture_begin(&st->cap)) { /* a call inside a call being captured */
        free(st);
        fp_count(c->L, FP_FALLBACK, FP_R_CAPTURING);
        return NULL;
    }
    memcpy(&st->c, c, sizeof *c);
    st->c.pos = NULL;     /* not needed past the key */
    c->device_obj = NULL; /* the state owns it now */
    fp_count(c->L, FP_MISS, 0);
    return st;
}

/* The kernel cache key Triton stored result under (jit.py run():
 * kernel_cache[key] = kernel), by identity; a new reference or NULL. */
static PyObject *cache_key_of(struct fp_call *c, PyObject *result, PyObject **kcache)
{
    PyObject *t = c->L->dcaches ? PY(PyDict_GetItemWithError)(c->L->dcaches, c->device_obj) : NULL;
    if (!t || FP_TYPE(t) != fpy.t_tuple || PY(PyTuple_Size)(t) < 1) {
        PY(PyErr_Clear)();
        return NULL;
    }
    PyObject *kc = PY(PyTuple_GetItem)(t, 0);
    if (!kc || FP_TYPE(kc) != fpy.t_dict)
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PY(PyDict_Next)(kc, &pos, &k, &v))
        if (v == result) {
            PY(Py_IncRef)(k);
            PY(Py_IncRef)(kc);
            *kcache = kc;
            return k;
        }
    return NULL;
}

static int num_ctas_of(const struct fp_capture *cap, unsigned *n)
{
    *n = 1;
    for (unsigned i = 0; i < cap->cfg.numAttrs; i++)
        if (cap->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            *n = cap->attrs[i].value.clusterDim.x;
    return *n >= 1 && *n <= 255 && cap->cfg.gridDimX % *n == 0 ? 0 : -1;
}

struct fp_entry *fp_entry_capture(const struct fp_key *k, const struct fp_capture *cap, uintptr_t func,
                                  const struct fp_want *w, unsigned nwant, PyObject *const *refs, unsigned nrefs,
                                  int *reason)
{
    unsigned num_ctas = 1;
    *reason = 0;
    if (cap->launches != 1)
        *reason = FP_R_NOMEMO_LAUNCHES;
    else if (!cap->ok || num_ctas_of(cap, &num_ctas) || func != (uintptr_t)cap->func)
        *reason = FP_R_NOMEMO_BLOCK; /* not copied whole, or not the launch of the call's kernel */
    if (*reason)
        return NULL;
    struct fp_want tw[FP_MAX_ARGS];
    if (cap->ntmap && nwant <= FP_MAX_ARGS) { /* where each tensor map holds its address */
        memcpy(tw, w, nwant * sizeof *w);
        fp_tmap_learn(cap, tw, nwant);
        w = tw;
    }
    struct fp_slot slots[FP_MAX_ARGS];
    unsigned nslots;
    int map =
        fp_slotmap_build(w, nwant, cap->pi.off, cap->pi.size, cap->pi.n, cap->blob, cap->pi.blob_len, slots, &nslots);
    if (map == FP_MAP_SCRATCH || map == FP_MAP_BAD) {
        *reason = map == FP_MAP_SCRATCH ? FP_R_NOMEMO_SCRATCH : FP_R_NOMEMO_BLOCK;
        return NULL;
    }
    int ident = fp_conf.mode == TRLAT_FP_MODE_IDENTICAL || map == FP_MAP_IDENT;
    struct fp_entry *e = fp_entry_new(k, cap->pi.n, cap->pi.blob_len, ident ? 0 : nslots, nwant, nrefs);
    if (!e) {
        *reason = FP_R_INTERNAL;
        return NULL;
    }
    e->kind = ident ? FP_E_IDENT : FP_E_VALUE;
    e->num_ctas = (uint8_t)num_ctas;
    e->api = cap->api;
    e->func = cap->func;
    e->cfg = cap->cfg;
    e->cfg.attrs = NULL;
    memcpy(e->attrs, cap->attrs, sizeof e->attrs);
    memcpy(e->off, cap->pi.off, cap->pi.n * 4);
    memcpy(e->size, cap->pi.size, cap->pi.n * 4);
    memcpy(e->blob, cap->blob, cap->pi.blob_len);
    if (!ident)
        memcpy(e->slots, slots, nslots * sizeof slots[0]);
    for (unsigned i = 0; i < nwant; i++)
        e->ident[i] = w[i].val;
    for (unsigned i = 0; i < nrefs; i++) {
        PY(Py_IncRef)(refs[i]);
        e->refs[i] = refs[i];
    }
    e->nrefs = nrefs;
    return e;
}

/* 0 when stored, else the nomemo reason. */
static int store(struct fp_state *st, PyObject *result)
{
    struct fp_call *c = &st->c;
    if (!result)
        return FP_R_NOMEMO_RAISED;
    int r;
    /* the launch was this kernel's: CompiledKernel.function is its handle */
    struct fp_entry *e =
        fp_entry_capture(&c->key, &st->cap, fp_kernel_function(result), c->want, c->nwant, c->refs, c->nrefs, &r);
    if (!e)
        return r;
    PyObject *kcache = NULL, *kkey = cache_key_of(c, result, &kcache);
    if (!kkey) {
        fp_entry_free(e);
        return FP_R_NOMEMO_CACHE;
    }
    PY(Py_IncRef)(result);
    e->kernel = result;
    e->kcache = kcache;
    e->kkey = kkey;
    e->stat = c->L->stat;
    fp_watch_dict(kcache);
    fp_watch_dict_of(result);     /* its function loaded again: fp_entry_current */
    e->checked_epoch = fpy.epoch; /* just found there */
    if (fp_conf.debug)
        trlat_log_debug("fast path: %s: memoized a %s entry (%u parameters, %u slots, key %u bytes)", e->stat->name,
                        e->kind == FP_E_IDENT ? "identical-only" : "value-mode", e->nparams, e->nslots, e->key_len);
    fp_entry_free(fp_memo_insert(&fp_memo, e)); /* e itself when nothing is stored */
    return 0;
}

/* ---- the contract (fastpath.h) ---- */
int fp_ready(void)
{
    if (!__atomic_load_n(&fp_conf.on, __ATOMIC_RELAXED) || forked || !trlat_active())
        return 0;
    if (!fp_py_init())
        return 0;
    static int installed;
    if (!installed) {
        installed = 1;
        if (fp_conf.getitem)
            fp_getitem_install();
    }
    return 1;
}

static int fp_prekeyed(PyObject *jitfn)
{
    const struct fp_prekey *pk = fp_prekey_tls;
    return pk && pk->jitfn == jitfn;
}

static PyObject *before(PyObject *jitfn, PyObject *args, PyObject *kwargs, void **state)
{
    *state = NULL;
    if (!fp_ready())
        return NULL;
    if (fp_prekeyed(jitfn)) {
        /* kernel[grid](...) through the C __getitem__, which keyed the call
         * and found no entry: capture it (or it counted a fallback) */
        struct fp_prekey *pk = fp_prekey_tls;
        fp_prekey_tls = NULL;
        if (pk->call)
            *state = fp_begin_capture(pk->call);
        return NULL;
    }
    if (!args && !kwargs)
        return NULL; /* only a prekeyed call may come without its arguments */
    struct fp_call c;
    PyObject *k = NULL;
    if (fp_call_from_dict(&c, jitfn, args, kwargs)) {
        fp_count(fp_layout_get(jitfn), FP_FALLBACK, FP_R_BINDING);
        return NULL;
    }
    struct fp_entry *e;
    int reason;
    switch (fp_lookup(&c, &e, &reason)) {
    case FP_HIT:
        k = fp_serve(&c, e, 0, &reason, NULL);
        fp_count(c.L, k ? FP_HIT : FP_FALLBACK, reason);
        break;
    case FP_MISS:
        *state = fp_begin_capture(&c);
        break;
    default:
        fp_count(c.L, FP_FALLBACK, reason);
    }
    fp_call_release(&c);
    if (!k && PY(PyErr_Occurred)())
        PY(PyErr_Clear)(); /* NULL means "Triton runs", never "raise" */
    return k;
}

_Thread_local unsigned fp_in_jit_run __attribute__((tls_model("initial-exec")));

static PyObject *fp_before(PyObject *jitfn, PyObject *args, PyObject *kwargs, void **state)
{
    PyObject *k = before(jitfn, args, kwargs, state);
    if (!k)
        fp_in_jit_run++; /* Triton runs; fp_after follows */
    return k;
}

static void fp_after(void *state, PyObject *result)
{
    struct fp_state *st = state;
    if (fp_in_jit_run)
        fp_in_jit_run--;
    if (!st)
        return;
    fp_capture_end(&st->cap);
    if (!forked) {
        int r = store(st, result);
        if (r)
            fp_count(st->c.L, FP_FALLBACK, r);
        else
            st->c.L->skip = 0; /* stored: key the next call (it may hit) */
        if (r && fp_conf.debug)
            trlat_log("fast path: %s: not memoized: %s", st->c.L->stat->name, fp_reason_names[r]);
    }
    fp_call_release(&st->c);
    free(st);
}

static int fp_prekey_entry(PyObject *jitfn, uint64_t *t0, uint64_t *site)
{
    const struct fp_prekey *pk = fp_prekey_tls;
    if (!fp_prekeyed(jitfn) || !pk->t0)
        return 0;
    *t0 = pk->t0;
    *site = pk->site;
    return 1;
}

const char *trlat_fastpath_state(const char **reason)
{
    *reason = NULL;
    if (trlat_config(TRLAT_OPT_FASTPATH) == TRLAT_FASTPATH_OFF)
        return NULL;
    if (started && fpy.ready > 0)
        return "ran";
    *reason = !started        ? "out of memory for the memo"
              : fpy.ready < 0 ? "this Python or Triton is not one it knows (needs CPython 3.11+ with a GIL, "
                                "Triton 3.6's JITFunction and torch)"
              : forked        ? "a forked child replays nothing"
                              : "no Triton launch from Python reached it";
    return "stood_aside";
}

int trlat_fastpath_on(void)
{
    return started;
}

static int set_fastpath(int on)
{
    if (!started || forked)
        return -1;
    int was = __atomic_exchange_n(&fp_conf.on, on ? 1 : 0, __ATOMIC_RELAXED);
    return was != 0;
}

/* A KernelInterface subclass's run: Inductor's CachingAutotuner, else
 * FlagGems' LibEntry; NULL without an error: the original runs. */
static PyObject *fp_entry_run(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *r = fp_inductor_run(orig, args, nargs, kwnames);
    if (r || PY(PyErr_Occurred)())
        return r;
    return fp_libentry_run(orig, args, nargs, kwnames);
}

static const struct trlat_pymemo pymemo = {.before = fp_before,
                                           .after = fp_after,
                                           .prekey_entry = fp_prekey_entry,
                                           .prekeyed = fp_prekeyed,
                                           .launcher_made = fp_launcher_made,
                                           .launch = fp_launcher_call,
                                           .launched = fp_launcher_done,
                                           .compiled_getitem = fp_compiled_getitem,
                                           .entry = fp_entry_run,
                                           .static_launch = fp_static_call,
                                           .static_launched = fp_static_done};

/* ---- the module ---- */
static void start(void)
{
    long fp = trlat_config(TRLAT_OPT_FASTPATH);
    const char *log = trlat_config_fastpath_log();
    fp_conf.verify = fp == TRLAT_FASTPATH_VERIFY;
    fp_conf.mode = (int)trlat_config(TRLAT_OPT_FP_MODE);
    fp_conf.memo_cap = (unsigned)trlat_config(TRLAT_OPT_FP_MEMO);
    fp_conf.keep_gil = trlat_config(TRLAT_OPT_FP_GIL) == TRLAT_FP_GIL_KEEP;
    fp_conf.getitem = (int)trlat_config(TRLAT_OPT_FP_GETITEM);
    fp_conf.libentry = (int)trlat_config(TRLAT_OPT_FP_LIBENTRY);
    fp_conf.debug = (int)trlat_config(TRLAT_OPT_FP_DEBUG);
    fp_conf.grid = (int)trlat_config(TRLAT_OPT_FP_GRID);
    fp_conf.tensor_getters = trlat_config(TRLAT_OPT_FP_TENSORS) == TRLAT_FP_TENSORS_GETTERS;
    if (fp != TRLAT_FASTPATH_OFF) {
        if (fp_memo_init(&fp_memo, fp_conf.memo_cap)) {
            trlat_log("fast path: out of memory for the memo; every call runs through Triton");
        } else {
            fp_conf.on = started = 1;
            if (fp_conf.debug)
                atexit(say_found);
        }
    }
    if (fp != TRLAT_FASTPATH_OFF || log)
        fp_capture_install(log);
}

static void after_fork_child(void)
{
    /* The parent's CUfunctions mean nothing here (and CUDA does not work
     * in a forked child): no replays, counters start over. */
    forked = 1;
    fp_conf.on = 0; /* the C __getitem__ goes back to Triton's lambda too */
    fp_capture_after_fork();
    fp_prekey_tls = NULL;
    fp_stats_reset();
    found_keyed = fp_found_launcher = fp_found_libentry = fp_found_libentry_gprog = fp_found_libentry_last =
        fp_found_libentry_first = fp_found_ptrreads = 0;
}

static const struct trlat_module module = {.name = "fastpath",
                                           .start = start,
                                           .after_fork_child = after_fork_child,
                                           .pymemo = &pymemo,
                                           .set_fastpath = set_fastpath,
                                           .tmap_encoded = fp_capture_tmap};

__attribute__((constructor)) static void register_module(void)
{
    trlat_module_register(&module);
}
