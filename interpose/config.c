#include "interpose/config.h"
#include "interpose/log.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct choice {
    const char *word;
    long value;
};

/* Every on/off variable takes the same words (and trlat run's flags:
 * report/cli/run.c), in any case. */
#define OFF_ON(off, on)                                              \
    {"0", off}, {"off", off}, {"false", off}, {"1", on}, {"on", on}, \
    {                                                                \
        "true", on                                                   \
    }
#define BOOL_WORDS "0 or 1 (on/off, true/false)"
static const struct choice bool_choices[] = {OFF_ON(0, 1), {NULL, 0}};
static const struct choice summary_choices[] = {
    OFF_ON(TRLAT_SUMMARY_OFF, TRLAT_SUMMARY_ON), {"all", TRLAT_SUMMARY_ALL}, {NULL, 0}};
static const struct choice cupti_choices[] = {
    OFF_ON(TRLAT_CUPTI_OFF, TRLAT_CUPTI_ON), {"auto", TRLAT_CUPTI_AUTO}, {NULL, 0}};
static const struct choice fastpath_choices[] = {
    OFF_ON(TRLAT_FASTPATH_OFF, TRLAT_FASTPATH_ON), {"verify", TRLAT_FASTPATH_VERIFY}, {NULL, 0}};
static const struct choice timing_choices[] = {{"all", TRLAT_TIMING_ALL},
                                               {"sampled", TRLAT_TIMING_SAMPLED},
                                               {"none", TRLAT_TIMING_NONE},
                                               {"auto", TRLAT_TIMING_AUTO},
                                               {NULL, 0}};
static const struct choice fp_mode_choices[] = {
    {"value", TRLAT_FP_MODE_VALUE}, {"identical", TRLAT_FP_MODE_IDENTICAL}, {NULL, 0}};
static const struct choice fp_gil_choices[] = {
    {"release", TRLAT_FP_GIL_RELEASE}, {"keep", TRLAT_FP_GIL_KEEP}, {NULL, 0}};
static const struct choice fp_tensor_choices[] = {
    {"fields", TRLAT_FP_TENSORS_FIELDS}, {"getters", TRLAT_FP_TENSORS_GETTERS}, {NULL, 0}};
/* skew: tests only (a wrong grid program, a LibEntry first call's constexprs one short: for verify mode to find) */
static const struct choice fp_grid_choices[] = {
    {"eval", TRLAT_FP_GRID_EVAL}, {"call", TRLAT_FP_GRID_CALL}, {"skew", TRLAT_FP_GRID_SKEW}, {NULL, 0}};

/* choices == NULL: a decimal number in [0, max]; is_str: any non-empty
 * text, kept as written (str, or str_def when unset or empty). */
struct option {
    const char *name;
    long def;
    const struct choice *choices;
    const char *accepted;
    long max;
    long value;
    int is_str;
    const char *str_def, *str;
};

static struct option options[TRLAT_OPT_COUNT] = {
    [TRLAT_OPT_DISABLE] = {"TRLAT_DISABLE", 0, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_SUMMARY] = {"TRLAT_SUMMARY", TRLAT_SUMMARY_ON, summary_choices, "0, 1 (on/off, true/false) or all", 0,
                           0},
    [TRLAT_OPT_CUPTI] = {"TRLAT_CUPTI", TRLAT_CUPTI_AUTO, cupti_choices, "0, 1 (on/off, true/false) or auto", 0, 0},
    [TRLAT_OPT_FASTPATH] = {"TRLAT_FASTPATH", TRLAT_FASTPATH_OFF, fastpath_choices,
                            "0, 1 (on/off, true/false) or verify", 0, 0},
    [TRLAT_OPT_STACKS] = {"TRLAT_STACKS", 0, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_TRACE] = {"TRLAT_TRACE", 0, NULL, "a number of launches from 0 to 10000000", TRLAT_TRACE_MAX, 0},
    [TRLAT_OPT_TIMING] = {"TRLAT_TIMING", TRLAT_TIMING_AUTO, timing_choices, "all, sampled, none or auto", 0, 0},
    [TRLAT_OPT_FP_MODE] = {"TRLAT_FASTPATH_MODE", TRLAT_FP_MODE_VALUE, fp_mode_choices, "value or identical", 0, 0},
    [TRLAT_OPT_FP_MEMO] = {"TRLAT_FASTPATH_MEMO", 1024, NULL, "a number of entries from 0 to 1048576",
                           TRLAT_FP_MEMO_MAX, 0},
    [TRLAT_OPT_FP_GIL] = {"TRLAT_FASTPATH_GIL", TRLAT_FP_GIL_RELEASE, fp_gil_choices, "release or keep", 0, 0},
    [TRLAT_OPT_FP_GETITEM] = {"TRLAT_FASTPATH_GETITEM", 1, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_FP_LIBENTRY] = {"TRLAT_FASTPATH_LIBENTRY", 1, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_FP_DEBUG] = {"TRLAT_FASTPATH_DEBUG", 0, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_FP_GRID] = {"TRLAT_FASTPATH_GRID", TRLAT_FP_GRID_EVAL, fp_grid_choices, "eval or call", 0, 0},
    [TRLAT_OPT_FP_PHASES] = {"TRLAT_FASTPATH_PHASES", 0, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_FP_TENSORS] = {"TRLAT_FASTPATH_TENSORS", TRLAT_FP_TENSORS_FIELDS, fp_tensor_choices, "fields or getters",
                              0, 0},
    [TRLAT_OPT_FLUSH_S] = {"TRLAT_FLUSH_S", 0, NULL, "a number of seconds from 0 to 86400", 86400, 0},
    [TRLAT_OPT_PY_PHASES] = {"TRLAT_PY_PHASES", 0, bool_choices, BOOL_WORDS, 0, 0},
    [TRLAT_OPT_OUTPUT] = {.name = "TRLAT_OUTPUT", .is_str = 1, .str_def = "trlat-%p.json"},
    [TRLAT_OPT_FP_LOG] = {.name = "TRLAT_FASTPATH_LOG", .is_str = 1},
    [TRLAT_OPT_REPORT_LIST] = {.name = "TRLAT_REPORT_LIST", .is_str = 1},
    [TRLAT_OPT_CUPTI_LIB] = {.name = "TRLAT_CUPTI_LIB", .is_str = 1},
};

static const char *cupti_off_why; /* why the configuration turned CUPTI off, or NULL */

static int parse(const struct option *o, const char *s, long *out)
{
    if (o->choices) {
        for (const struct choice *c = o->choices; c->word; c++)
            if (strcasecmp(s, c->word) == 0) {
                *out = c->value;
                return 0;
            }
        return -1;
    }
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v > o->max)
        return -1;
    *out = v;
    return 0;
}

static const char *default_name(const struct option *o, char *buf, size_t len)
{
    if (o->choices)
        for (const struct choice *c = o->choices; c->word; c++)
            if (c->value == o->def)
                return c->word;
    snprintf(buf, len, "%ld", o->def);
    return buf;
}

void trlat_config_load(void)
{
    for (int i = 0; i < TRLAT_OPT_COUNT; i++) {
        struct option *o = &options[i];
        o->value = o->def;
        const char *s = getenv(o->name);
        o->str = o->is_str && s && *s ? s : o->str_def;
        if (!s || !*s || o->is_str)
            continue;
        long v;
        char buf[24];
        if (parse(o, s, &v) == 0)
            o->value = v;
        else
            trlat_log("%s=%.64s is not valid (expected %s); using %s", o->name, s, o->accepted,
                      default_name(o, buf, sizeof buf));
    }
    cupti_off_why = NULL;
    long *timing = &options[TRLAT_OPT_TIMING].value, *cupti = &options[TRLAT_OPT_CUPTI].value;
    /* auto: the fast path's hits sampled (its point is speed, as CUPTI's
     * staying off under it below), all timed otherwise or where CUPTI or a
     * trace is asked for: they need every launch's times */
    if (*timing == TRLAT_TIMING_AUTO)
        *timing = options[TRLAT_OPT_FASTPATH].value == TRLAT_FASTPATH_ON && *cupti != TRLAT_CUPTI_ON &&
                          !options[TRLAT_OPT_TRACE].value
                      ? TRLAT_TIMING_SAMPLED
                      : TRLAT_TIMING_ALL;
    if (*timing == TRLAT_TIMING_SAMPLED && (*cupti == TRLAT_CUPTI_ON || options[TRLAT_OPT_TRACE].value)) {
        trlat_log("%s needs every launch timed; with it, TRLAT_TIMING=sampled times all",
                  *cupti == TRLAT_CUPTI_ON ? "TRLAT_CUPTI=1" : "TRLAT_TRACE");
        *timing = TRLAT_TIMING_ALL;
    }
    if (*timing == TRLAT_TIMING_NONE) {
        /* CUPTI's records join launches by their driver entry time, and a
         * trace event is a timed launch: neither has one to go by */
        if (options[TRLAT_OPT_CUPTI].value == TRLAT_CUPTI_ON)
            trlat_log("TRLAT_CUPTI=1 needs launch times; with TRLAT_TIMING=none CUPTI stays off");
        if (options[TRLAT_OPT_TRACE].value)
            trlat_log("TRLAT_TRACE needs launch times; with TRLAT_TIMING=none no events are kept");
        options[TRLAT_OPT_CUPTI].value = TRLAT_CUPTI_OFF;
        options[TRLAT_OPT_TRACE].value = 0;
        cupti_off_why =
            "TRLAT_TIMING=none: launches are not timed, and CUPTI's records join them by their driver entry "
            "time";
    } else if (options[TRLAT_OPT_CUPTI].value == TRLAT_CUPTI_AUTO &&
               options[TRLAT_OPT_FASTPATH].value == TRLAT_FASTPATH_ON) {
        /* CUPTI's callback and kernel record cost each launch of the
         * process 0.3-2.5 us on the GPU machine (docs/BENCHMARKS.md,
         * current figures): as much as a replay itself. Asked for, it runs. */
        options[TRLAT_OPT_CUPTI].value = TRLAT_CUPTI_OFF;
        cupti_off_why = "TRLAT_FASTPATH=1: CUPTI would add 0.3-2.5 us to every launch; TRLAT_CUPTI=1 turns it on";
    } else if (*cupti == TRLAT_CUPTI_AUTO && *timing == TRLAT_TIMING_SAMPLED) {
        /* a hit left out of the sample has no entry time for CUPTI's record to join */
        *cupti = TRLAT_CUPTI_OFF;
        cupti_off_why = "TRLAT_TIMING=sampled: a fast-path hit left out of the sample is not timed, and CUPTI's "
                        "records join launches by their driver entry time; TRLAT_CUPTI=1 turns it on, all timed";
    }
}

const char *trlat_config_cupti_off_why(void)
{
    return cupti_off_why;
}

int trlat_config_peek(enum trlat_opt opt, long *value)
{
    const struct option *o = &options[opt];
    const char *s = o->is_str ? NULL : getenv(o->name);
    return s && *s && parse(o, s, value) == 0;
}

const char *trlat_config_str(enum trlat_opt opt)
{
    const struct option *o = &options[opt];
    if (!o->is_str)
        return NULL;
    return o->str ? o->str : o->str_def; /* before trlat_config_load too */
}

const char *trlat_config_fastpath_log(void)
{
    return trlat_config_str(TRLAT_OPT_FP_LOG);
}

long trlat_config(enum trlat_opt opt)
{
    return options[opt].value;
}

const char *trlat_config_output(void)
{
    return trlat_config_str(TRLAT_OPT_OUTPUT);
}

/* A variable of the launchers' that gives a rank as a plain decimal
 * 0..INT_MAX: -1 when unset; anything else is said once and ignored (a
 * value like "../x" must not reach a path). */
static long rank_var(const char *var, atomic_flag *said)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return -1;
    long v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9' && v <= INT_MAX; p++)
        v = v * 10 + (*p - '0');
    if (!*p && v <= INT_MAX)
        return v;
    trlat_log_once(said, "%s=%.64s is not a number from 0 to %d; ignored", var, s, INT_MAX);
    return -1;
}

/* torchrun's, then Slurm's, Open MPI's and the PMI's (MPICH, Intel MPI,
 * PMIx): the first one set and valid */
static const char *const rank_vars[TRLAT_RANK_KINDS][5] = {
    [TRLAT_RANK] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"},
    [TRLAT_LOCAL_RANK] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", NULL},
    [TRLAT_WORLD_SIZE] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL},
};

long trlat_config_rank(enum trlat_rank which)
{
    static atomic_flag said[TRLAT_RANK_KINDS][5];
    for (int i = 0; i < 5 && rank_vars[which][i]; i++) {
        long v = rank_var(rank_vars[which][i], &said[which][i]);
        if (v >= 0)
            return v;
    }
    return -1;
}

const char *trlat_config_name(enum trlat_opt opt)
{
    switch (opt) {
    case TRLAT_OPT_CUPTI:
        return options[opt].value == TRLAT_CUPTI_OFF ? "off" : options[opt].value == TRLAT_CUPTI_ON ? "on" : "auto";
    case TRLAT_OPT_FASTPATH:
        return options[opt].value == TRLAT_FASTPATH_OFF  ? "off"
               : options[opt].value == TRLAT_FASTPATH_ON ? "on"
                                                         : "verify";
    case TRLAT_OPT_TIMING:
        return options[opt].value == TRLAT_TIMING_NONE      ? "none"
               : options[opt].value == TRLAT_TIMING_SAMPLED ? "sampled"
                                                            : "all";
    default:
        return options[opt].value ? "1" : "0";
    }
}
