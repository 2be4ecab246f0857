/* A report struct back to a trlat-report/1 document (what `trlat merge`
 * writes), fields in docs/REPORT.md's order, percentiles recomputed from
 * the histograms; events one at a time. */
#include "report/cli/cli.h"

#include <jansson.h>

static json_t *j_int(uint64_t v)
{
    return json_integer((json_int_t)v);
}

json_t *cli_jv_opt(const struct cli_u64 *v)
{
    return v->set ? j_int(v->v) : json_null();
}

json_t *cli_jv_str(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *j_stat(const struct cli_stat *st)
{
    if (!st->set)
        return json_null();
    const struct trlat_stat *s = &st->s;
    json_t *hist = json_array();
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++)
        if (s->hist[i])
            json_array_append_new(hist, json_pack("[I,I]", (json_int_t)i, (json_int_t)s->hist[i]));
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "count", j_int(s->count), "sum", j_int(s->sum), "min",
                     j_int(s->min), "max", j_int(s->max), "p50", j_int(trlat_stat_quantile(s, 0.5)), "p90",
                     j_int(trlat_stat_quantile(s, 0.9)), "p99", j_int(trlat_stat_quantile(s, 0.99)), "hist", hist);
}

static json_t *j_clock(const struct cli_clock *c)
{
    if (!c->source)
        return json_null();
    return json_pack("{s:s,s:o,s:o}", "source", c->source, "epoch_monotonic_ns", cli_jv_opt(&c->epoch_mono),
                     "epoch_realtime_ns", cli_jv_opt(&c->epoch_real));
}

static json_t *j_fastpath(const struct cli_fastpath *fp)
{
    if (!fp->set)
        return json_null();
    json_t *fallbacks = json_object();
    for (size_t i = 0; i < fp->n_fallbacks; i++)
        json_object_set_new(fallbacks, fp->fallbacks[i].name, j_int(fp->fallbacks[i].n));
    json_t *o = json_pack("{s:o,s:o}", "hits", j_int(fp->hits), "misses", j_int(fp->misses));
    if (fp->has_library)
        json_object_set_new(o, "library_hits", j_int(fp->library_hits));
    json_object_set_new(o, "fallbacks", fallbacks);
    return o;
}

static json_t *j_kernel(const struct cli_kernel *k)
{
    json_t *sites = json_array();
    for (size_t i = 0; i < k->n_sites; i++) {
        const struct cli_site *s = &k->sites[i];
        json_t *site = json_pack("{s:s}", "site", s->site);
        if (s->kind)
            json_object_set_new(site, "kind", json_string(s->kind));
        if (s->user)
            json_object_set_new(site, "user_site", json_string(s->user));
        json_object_set_new(site, "launches", j_int(s->launches));
        if (s->gap_ns.set)
            json_object_set_new(site, "gap_ns", j_int(s->gap_ns.v));
        if (s->triton_ns.set)
            json_object_set_new(site, "triton_ns", j_int(s->triton_ns.v));
        if (s->library_ns.set)
            json_object_set_new(site, "library_ns", j_int(s->library_ns.v));
        json_array_append_new(sites, site);
    }
    json_t *o = json_pack("{s:s,s:o,s:o,s:{s:o,s:o},s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name", k->name, "module",
                          cli_jv_str(k->module), "launches", j_int(k->launches), "sources", "driver",
                          j_int(k->src_driver), "runtime", j_int(k->src_runtime), "errors", j_int(k->errors),
                          "driver_ns", j_stat(&k->driver), "gap_ns", j_stat(&k->gap), "py_to_driver_ns", j_stat(&k->py),
                          "gpu_ns", j_stat(&k->gpu), "starved_ns", cli_jv_opt(&k->starved), "starved_launches",
                          cli_jv_opt(&k->starved_launches), "fastpath", j_fastpath(&k->fastpath), "call_sites", sites);
    if (o && k->ret.set) /* reports from before it have none */
        json_object_set_new(o, "py_return_ns", j_stat(&k->ret));
    if (o && k->phases.set) {
        json_t *ph =
            json_pack("{s:o,s:o}", "calls", j_int(k->phases.calls), "split_calls", j_int(k->phases.split_calls));
        for (int i = 0; i < CLI_PHASES; i++)
            json_object_set_new(ph, cli_phase_keys[i], j_int(k->phases.ns[i]));
        json_object_set_new(o, "py_phases_ns", ph);
    }
    if (o && k->library.set)
        json_object_set_new(o, "py_library_ns",
                            json_pack("{s:o,s:o}", "calls", j_int(k->library.calls), "sum", j_int(k->library.ns)));
    return o;
}

static json_t *j_dims(const uint64_t d[3])
{
    return json_pack("[o,o,o]", j_int(d[0]), j_int(d[1]), j_int(d[2]));
}

void *cli_event_to_json(const struct cli_event *e)
{
    static const char *const kinds[] = {"launch", "gpu", "starved"};
    json_t *ev = json_pack("{s:s}", "kind", kinds[e->kind]);
    if (e->pid.set)
        json_object_set_new(ev, "pid", j_int(e->pid.v));
    if (e->scope) /* absent in older reports: kept absent */
        json_object_set_new(ev, "scope", json_string(e->scope));
    if (e->kind == CLI_EV_LAUNCH)
        json_object_set_new(ev, "tid", cli_jv_opt(&e->tid));
    json_object_set_new(ev, "kernel", json_string(e->kernel));
    if (e->kind != CLI_EV_LAUNCH) {
        json_object_set_new(ev, "device", cli_jv_opt(&e->device));
        json_object_set_new(ev, "stream", cli_jv_opt(&e->stream));
    }
    json_object_set_new(ev, "start_ns", j_int(e->start));
    json_object_set_new(ev, "end_ns", j_int(e->end));
    if (e->kind == CLI_EV_LAUNCH) {
        json_object_set_new(ev, "py_ns", cli_jv_opt(&e->py));
        json_object_set_new(ev, "stream", cli_jv_str(e->stream_handle));
    }
    if (e->kind != CLI_EV_STARVED)
        json_object_set_new(ev, "corr", cli_jv_opt(&e->corr));
    if (e->cupti_corr.set)
        json_object_set_new(ev, "cupti_corr", j_int(e->cupti_corr.v));
    if (e->kind == CLI_EV_LAUNCH && e->has_dims) {
        json_object_set_new(ev, "grid", j_dims(e->grid));
        json_object_set_new(ev, "block", j_dims(e->block));
    }
    if (e->kind == CLI_EV_GPU)
        json_object_set_new(ev, "source", cli_jv_str(e->source));
    return ev;
}

static json_t *j_origin(const struct cli_origin *o)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "pid", j_int(o->pid), "rank", cli_jv_opt(&o->rank), "host",
                     cli_jv_str(o->host), "argv0", cli_jv_str(o->argv0), "clock", j_clock(&o->clock));
}

static json_t *j_config(const struct cli_report *r)
{
    json_t *c = json_pack("{s:o,s:o,s:o,s:o,s:o}", "cupti", cli_jv_str(r->config.cupti), "cupti_reason",
                          cli_jv_str(r->config.cupti_reason), "fastpath", cli_jv_str(r->config.fastpath), "stacks",
                          r->config.stacks < 0 ? json_null() : json_boolean(r->config.stacks), "trace",
                          cli_jv_opt(&r->config.trace));
    if (c && r->config.timing) /* absent where the inputs did not say */
        json_object_set_new(c, "timing", json_string(r->config.timing));
    if (c && r->config.fastpath_state) {
        json_object_set_new(c, "fastpath_state", json_string(r->config.fastpath_state));
        json_object_set_new(c, "fastpath_reason", cli_jv_str(r->config.fastpath_reason));
    }
    return c;
}

static json_t *j_totals(const struct cli_report *r)
{
    json_t *t =
        json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "launches", j_int(r->totals.launches), "kernels",
                  j_int(r->totals.kernels), "threads", cli_jv_opt(&r->totals.threads), "driver_ns",
                  j_int(r->totals.driver_ns), "py_to_driver_ns", cli_jv_opt(&r->totals.py_to_driver_ns), "gpu_ns",
                  cli_jv_opt(&r->totals.gpu_ns), "gpu_busy_ns", cli_jv_opt(&r->totals.gpu_busy_ns), "starved_ns",
                  cli_jv_opt(&r->totals.starved_ns), "dropped_records", cli_jv_opt(&r->totals.dropped_records),
                  "unnamed_launches", cli_jv_opt(&r->totals.unnamed_launches));
    if (t && r->totals.trace_lost.set)
        json_object_set_new(t, "trace_lost", j_int(r->totals.trace_lost.v));
    return t;
}

static json_t *j_python(const struct cli_python *py)
{
    if (!py->set)
        return json_null();
    json_t *o = json_pack("{s:s,s:o,s:o}", "hook", py->hook, "triton_version", cli_jv_str(py->triton_version), "reason",
                          cli_jv_str(py->reason));
    json_t *without = json_object();
    for (size_t i = 0; i < CLI_PY_COUNTS; i++)
        json_object_set_new(i < CLI_PY_NO_LAUNCH_WARMUP ? o : without, cli_python_counts[i], j_int(py->n[i]));
    json_object_set_new(o, "calls_without_launch", without);
    return o;
}

static json_t *j_gpu(const struct cli_gpu *gpu)
{
    if (!gpu->set)
        return json_null();
    json_t *o = json_object();
    for (size_t i = 0; i < CLI_GPU_COUNTERS; i++)
        json_object_set_new(o, cli_gpu_counters[i], j_int(gpu->n[i]));
    return o;
}

void *cli_report_to_json(const struct cli_report *r)
{
    json_t *doc =
        json_pack("{s:s,s:o,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "schema", CLI_SCHEMA, "trlat_version",
                  cli_jv_str(r->trlat_version), "hist_scheme", TRLAT_HIST_SCHEME, "pid", j_int(r->pid), "rank",
                  cli_jv_opt(&r->rank), "local_rank", cli_jv_opt(&r->local_rank), "world_size",
                  cli_jv_opt(&r->world_size), "host", cli_jv_str(r->host), "argv0", cli_jv_str(r->argv0), "wall_ns",
                  cli_jv_opt(&r->wall_ns), "clock", j_clock(&r->clock), "config", j_config(r), "totals", j_totals(r));
    json_object_set_new(doc, "python", j_python(&r->python));
    json_object_set_new(doc, "gpu", j_gpu(&r->gpu));
    if (r->regions) {
        json_t *regions = json_array();
        for (size_t i = 0; i < r->n_regions; i++) {
            const struct cli_region *g = &r->regions[i];
            json_array_append_new(regions, json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "name", g->name, "launches",
                                                     j_int(g->launches), "driver_ns", j_int(g->driver_ns),
                                                     "py_to_driver_ns", j_int(g->py_ns), "py_return_ns",
                                                     j_int(g->ret_ns), "gap_ns", j_int(g->gap_ns)));
        }
        json_object_set_new(doc, "regions", regions);
    }
    json_t *kernels = json_array();
    for (size_t i = 0; i < r->n_kernels; i++)
        json_array_append_new(kernels, j_kernel(&r->kernels[i]));
    json_object_set_new(doc, "kernels", kernels);
    json_object_set_new(doc, "events", json_array());
    if (r->n_merged) {
        json_t *from = json_array();
        for (size_t i = 0; i < r->n_merged; i++)
            json_array_append_new(from, j_origin(&r->merged_from[i]));
        json_object_set_new(doc, "merged_from", from);
    }
    return doc;
}
