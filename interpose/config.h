/* TRLAT_* environment variables: one table row per option, read once at
 * trlat's start. A bad value gets one stderr line naming the variable and the
 * accepted values; the default stands. */
#ifndef TRLAT_CONFIG_H
#define TRLAT_CONFIG_H

#include "interpose/format.h"

#include <stdint.h>

enum trlat_opt {
    TRLAT_OPT_DISABLE,  /* bool */
    TRLAT_OPT_SUMMARY,  /* TRLAT_SUMMARY_OFF / _ON / _ALL */
    TRLAT_OPT_CUPTI,    /* TRLAT_CUPTI_OFF / _ON / _AUTO */
    TRLAT_OPT_FASTPATH, /* TRLAT_FASTPATH_OFF / _ON / _VERIFY */
    TRLAT_OPT_STACKS,   /* bool */
    TRLAT_OPT_TRACE,    /* number of launches kept as events */
    TRLAT_OPT_TIMING,   /* TRLAT_TIMING_ALL / _SAMPLED / _NONE (auto resolved at load) */
    /* the fast path's own (fastpath/, docs/FASTPATH.md) */
    TRLAT_OPT_FP_MODE,     /* TRLAT_FP_MODE_VALUE / _IDENTICAL */
    TRLAT_OPT_FP_MEMO,     /* memo entries, 0: never store */
    TRLAT_OPT_FP_GIL,      /* TRLAT_FP_GIL_RELEASE / _KEEP */
    TRLAT_OPT_FP_GETITEM,  /* bool: the C kernel[grid] launcher */
    TRLAT_OPT_FP_LIBENTRY, /* bool: FlagGems' LibEntry.run served in C */
    TRLAT_OPT_FP_DEBUG,    /* bool */
    TRLAT_OPT_FP_GRID,     /* TRLAT_FP_GRID_CALL / _EVAL / _SKEW */
    TRLAT_OPT_FP_PHASES,   /* bool */
    TRLAT_OPT_FP_TENSORS,  /* TRLAT_FP_TENSORS_FIELDS / _GETTERS */
    TRLAT_OPT_FLUSH_S,     /* seconds between checkpoint reports, 0: none */
    TRLAT_OPT_PY_PHASES,   /* bool: py->driver split by Triton's phases */
    /* text options (trlat_config_str) */
    TRLAT_OPT_OUTPUT,      /* the report's path template */
    TRLAT_OPT_FP_LOG,      /* the fast path's launch log, or NULL */
    TRLAT_OPT_REPORT_LIST, /* where each report's absolute path is appended, or NULL */
    TRLAT_OPT_CUPTI_LIB,   /* libcupti to load, or NULL: searched */
    TRLAT_OPT_COUNT
};

enum { TRLAT_CUPTI_OFF = 0, TRLAT_CUPTI_ON = 1, TRLAT_CUPTI_AUTO = 2 };
/* on: local rank 0's (or a process without one); all: every rank's */
enum { TRLAT_SUMMARY_OFF = 0, TRLAT_SUMMARY_ON = 1, TRLAT_SUMMARY_ALL = 2 };
enum { TRLAT_FASTPATH_OFF = 0, TRLAT_FASTPATH_ON = 1, TRLAT_FASTPATH_VERIFY = 2 };
enum { TRLAT_TIMING_ALL = 0, TRLAT_TIMING_NONE = 1, TRLAT_TIMING_SAMPLED = 2, TRLAT_TIMING_AUTO = 3 };
enum { TRLAT_FP_MODE_VALUE = 0, TRLAT_FP_MODE_IDENTICAL = 1 };
enum { TRLAT_FP_GIL_RELEASE = 0, TRLAT_FP_GIL_KEEP = 1 };
enum { TRLAT_FP_TENSORS_FIELDS = 0, TRLAT_FP_TENSORS_GETTERS = 1 };
enum { TRLAT_FP_GRID_CALL = 0, TRLAT_FP_GRID_EVAL = 1, TRLAT_FP_GRID_SKEW = 2 };

#define TRLAT_FP_MEMO_MAX (1 << 20)

/* Parses the environment (again). Called once at start and after fork. */
void trlat_config_load(void);
/* The option's value in the environment now, before trlat_config_load
 * (a constructor's): 1 with *value when it is set and valid, else 0,
 * nothing said. Numbers and choices only. */
int trlat_config_peek(enum trlat_opt opt, long *value);
/* The option's value (valid after trlat_config_load). */
long trlat_config(enum trlat_opt opt);
/* A text option's value, or its default (NULL for none). */
const char *trlat_config_str(enum trlat_opt opt);
/* TRLAT_OUTPUT, or the default template. */
const char *trlat_config_output(void);
/* Why the configuration turned CUPTI off (TRLAT_TIMING=none or sampled;
 * auto under TRLAT_FASTPATH=1), or NULL. */
const char *trlat_config_cupti_off_why(void);
/* TRLAT_FASTPATH_LOG, or NULL. */
const char *trlat_config_fastpath_log(void);
/* The process's rank, local rank or world size from the launcher's
 * variables (torchrun's RANK, LOCAL_RANK, WORLD_SIZE, then Slurm's, Open
 * MPI's and the PMI's), each a decimal 0..INT_MAX; -1 when none is set
 * (an invalid value is said once and ignored). */
enum trlat_rank { TRLAT_RANK, TRLAT_LOCAL_RANK, TRLAT_WORLD_SIZE, TRLAT_RANK_KINDS };
long trlat_config_rank(enum trlat_rank which);
/* Name of a value for the report's config object ("on", "auto", ...). */
const char *trlat_config_name(enum trlat_opt opt);

#endif
