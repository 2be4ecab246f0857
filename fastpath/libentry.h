/* FlagGems' LibEntry.run served in C (libentry.c): what its parts share,
 * the call's key (libentry_key.c) and its grid and pre-hooks
 * (libentry_grid.c). Everything runs with the GIL held. */
#ifndef TRLAT_FP_LIBENTRY_H
#define TRLAT_FP_LIBENTRY_H

#include "fastpath/fp_py.h"
#include "fastpath/phases.h"

#include <stdatomic.h>

#define LE_NB 12 /* the builtins run and key call by name (libentry.c) */

/* The class modelled as learnt, and the names the model reads (libentry.c). */
struct le_cls {
    int state; /* 0 not looked at, 1 modelled, -1 not */
    void *type;
    PyObject *run, *key;          /* held: as checked */
    PyObject *globals, *builtins; /* held, watched */
    PyObject *bval[LE_NB], *bname[LE_NB];
    PyObject *devfn, *inspect, *odict; /* the module's torch_device_fn, inspect and OrderedDict (held) */
    uint64_t epoch;
    PyObject *one_one, *slice03;
    int (*lookup)(PyObject *, PyObject *, PyObject **); /* hasattr's own lookup */
    PyObject *s_grid, *s_key, *s_run, *s_dtype, *s_data_ptr, *s_current_device, *s_kernel_cache, *s_signature, *s_jit,
        *s_spec, *s_dns, *s_div, *s_arg_names, *s_major, *s_minor, *s_devfn, *s_inspect, *s_odict, *s__empty, *s_i32,
        *s_u64, *s_i64, *s_td, *s_shape, *s_strides, *s_block_shape, *s_padding, *s__run, *s_builtins, *s_fn, *s_lock,
        *s_triton, *s_jitcls, *s_heurcls, *s_values, *s_enter, *s_exit, *s_module;
};
extern struct le_cls le_cls;

struct le {
    PyObject *self, *jit, *sig, *spec, *dns; /* held: as learnt */
    struct fp_layout *L;
    unsigned nspec, ndns;
    PyObject *specv[FP_MAX_ARGS], *dnsv[FP_MAX_ARGS]; /* the lists' items as learnt (held) */
    uint8_t kind[FP_MAX_ARGS];                        /* a positional argument: 0 spec, 1 dns, 2 constexpr */
    const char *bad;                                  /* why never served (NULL: served) */
    const char *first_bad;                            /* why its first-call path is never served (libentry_first.c) */
    /* the keywords of the last call (held: the same objects, the same
     * strings) and the parameter each names (an index into them, -1 none) */
    PyObject *kwseen[FP_MAX_KW];
    unsigned nkwseen;
    int8_t kwmap[FP_MAX_ARGS];
    PyObject *dict;          /* its __dict__ when last found as learnt (never followed) */
    uint64_t dict_version;   /* and that dict's version then */
    struct fp_le_last *last; /* the entries of its last keys (libentry_last.c) */
    struct fp_le_phases ph;  /* TRLAT_FASTPATH_PHASES */
};

/* A call run(self, *pos, **kw) as vectorcall passes it, with the keyword
 * that names each parameter (kw[j]: an index into kwn and kwv, -1 none). */
struct lcall {
    PyObject *const *pos, *const *kwv;
    PyObject *kwn;
    Py_ssize_t npos;
    int8_t kw[FP_MAX_ARGS];
};

enum { K_SPEC, K_DNS, K_CONST };

/* ---- the call and its key (libentry_key.c) ---- */
/* c->kw for the call's keywords; -1 when there are too many. */
int le_bind_keywords(struct le *E, struct lcall *c);
/* The call's value of parameter j: positional, keyword or default (NULL: none). */
PyObject *le_value_of(const struct le *E, const struct lcall *c, unsigned j);
/* key()'s items for the call, in its order (specialized, not, constexprs):
 * new references in out[0..*n); -1 when it is not the hit path modelled. */
int le_entry_parts(const struct le *E, PyObject *d, const struct lcall *c, struct fp_le_part *out, unsigned *n);
/* tuple(parts): the key run() looks up (new reference). */
PyObject *le_key_tuple(const struct fp_le_part *p, unsigned n);
void le_parts_drop(struct fp_le_part *p, unsigned n);
/* (a, b), stealing both (NULL, both dropped, when either is NULL). */
PyObject *le_pair(PyObject *a, PyObject *b);

/* ---- the grid and the pre-hooks (libentry_grid.c) ---- */
/* The grid a grid function's program computes for this call, without
 * calling it: grid(meta) + (1, 1) cut to [0:3]; NULL, no error, when it
 * cannot say. */
PyObject *le_grid_program(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, PyObject *constexprs,
                          unsigned g[3]);
/* grid(meta) if callable, + (1, 1): run()'s grid before its pre-hooks
 * (new reference); a grid function's program's grid already cut to [0:3]. */
PyObject *le_grid_plus(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, PyObject *constexprs);
/* [0:3] of it: the grid run() indexes the kernel with (new reference; steals g2). */
PyObject *le_grid_cut(PyObject *g2);
/* Each launch pre-hook called as run() calls it; -1 when one raised. */
int le_pre_hooks(PyObject *d, PyObject *hooks, const struct lcall *c);

/* Verify mode found the model wrong (libentry.c): said once ("LibEntry.run
 * of <kernel> " what), counted (verify_mismatch), *flag set to why. */
void le_model_wrong(struct le *E, atomic_flag *once, const char *what, const char **flag);

/* ---- run()'s first-call path (libentry_first.c) ---- */
/* run()'s first-call path for the call's key, which cache lacks (both
 * held by the caller): the call's result, or NULL with the error it
 * raised; NULL without one when not served, nothing having run. */
PyObject *le_first_call(struct le *E, PyObject *d, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject *cache, PyObject *key);
/* Verify mode: the original run(self, *args, **kwargs) for such a call,
 * its result returned, and the entry it stored checked against the one
 * le_first_call would have stored (else that LibEntry's first calls run
 * the original from then on); NULL without an error when not served. */
PyObject *le_first_verify(struct le *E, PyObject *d, PyObject *orig, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject *cache, PyObject *key);

#endif
