/* The call sites of a hooked call, walking out from the current frame:
 * - the kernel's site: the first frame outside the launch runtime
 *   (Triton's package, Inductor's runtime: the lambda of
 *   KernelInterface.__getitem__, Autotuner.run, CachingAutotuner.run);
 * - the user's site: the first frame of the program's own code, past the
 *   libraries' (the interpreter's, installed packages', Inductor's
 *   generated code), so that `model.py:87` stands beside a library's
 *   `rms_norm.py:483`. The same frame when the kernel's site is the
 *   program's own, the common case, found without walking further.
 * Known (code, offset) pairs cost a hash lookup per frame (a probe of the
 * thread's last frames, reading 3.12's and 3.13's frames directly); the
 * line number (a scan of the line table) and the frame's level (its file
 * against the rules below) are computed once per pair. */
#include "interpose/python/pyhook.h"
#include "interpose/python/pysites.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32       /* frames to the kernel's site */
#define MAX_USER_DEPTH 128 /* frames to the user's (nn.Module nesting, torch.compile's frames) */
#define MAX_RULES 16

/* File rules, set by pyhook.py (GIL held, as every reader). A rule is a
 * prefix, or with a leading '*' a substring ("*\/site-packages/"). */
static struct {
    char *rule[MAX_RULES];
    int n;
} rules[2]; /* [0]: the runtime's files, [1]: libraries' */

static int rule_match(const char *file, const char *rule)
{
    return rule[0] == '*' ? strstr(file, rule + 1) != NULL : strncmp(file, rule, strlen(rule)) == 0;
}

static int file_level(const char *file)
{
    if (!file)
        return TRLAT_PYSITE_LIBRARY;
    for (int i = 0; i < rules[0].n; i++)
        if (rule_match(file, rules[0].rule[i]))
            return TRLAT_PYSITE_RUNTIME;
    if (file[0] == '<') /* <frozen importlib._bootstrap>, <string>, exec'd code */
        return TRLAT_PYSITE_LIBRARY;
    for (int i = 0; i < rules[1].n; i++)
        if (rule_match(file, rules[1].rule[i]))
            return TRLAT_PYSITE_LIBRARY;
    return TRLAT_PYSITE_USER;
}

int trlat_pyhook_add_site_rule(int library, const char *rule)
{
    int w = library != 0;
    if (!rule || !*rule || rules[w].n == MAX_RULES)
        return -1;
    for (int i = 0; i < rules[w].n; i++)
        if (strcmp(rules[w].rule[i], rule) == 0)
            return 0;
    char *c = strdup(rule);
    if (!c)
        return -1;
    rules[w].rule[rules[w].n++] = c; /* kept for the process */
    return 0;
}

/* Key of the frame's current instruction: its offset (3.11+), else its line. */
static int64_t frame_offset(PyObject *f)
{
    if (PY(PyFrame_GetLasti))
        return PY(PyFrame_GetLasti)(f);
    return (int64_t)PY(PyFrame_GetLineNumber)(f) | ((int64_t)1 << 40);
}

/* Stores (code, off) at line with the level of the code's file. */
static void learn_line(PyObject *code, int64_t off, int line, struct trlat_pysite_hit *hit)
{
    const char *file = NULL;
    PyObject *name = PY(PyObject_GetAttrString)(code, "co_filename");
    if (name)
        file = PY(PyUnicode_AsUTF8)(name);
    if (!file)
        PY(PyErr_Clear)();
    if (trlat_pysite_insert(code, off, file, line, file_level(file), hit))
        PY(Py_IncRef)(code); /* its address stays this code's */
    if (name)
        PY(Py_DecRef)(name);
}

/* A frame object's (code, offset): its site and level, learnt on first sight. */
static void frame_hit(PyObject *f, PyObject *code, int64_t off, struct trlat_pysite_hit *hit)
{
    if (!trlat_pysite_lookup(code, off, hit))
        learn_line(code, off, PY(PyFrame_GetLineNumber)(f), hit);
}

/* The user's site of a call on a thread with no frame of the program's
 * own: torch's autograd engine runs the backward functions of a library's
 * autograd.Function (Liger-Kernel's) on a thread of its own, while the
 * thread that asked for them waits in torch/autograd/graph.py's
 * _engine_run_backward, below the program's `loss.backward()`. With the GIL
 * held here, that thread's frames stand still: its first frame of the
 * program's own code is the call's user site. 0 when no thread waits so
 * (its wait is C: the function is its innermost frame, or nearly). */
static int is_engine_wait(PyObject *code)
{
    static PyObject *known; /* the function's code, once seen (held) */
    if (code == known)
        return 1;
    if (known)
        return 0;
    PyObject *name = PY(PyObject_GetAttrString)(code, "co_name");
    PyObject *file = name ? PY(PyObject_GetAttrString)(code, "co_filename") : NULL;
    const char *n = name ? PY(PyUnicode_AsUTF8)(name) : NULL, *f = file ? PY(PyUnicode_AsUTF8)(file) : NULL;
    size_t fl = f ? strlen(f) : 0;
    static const char tail[] = "torch/autograd/graph.py";
    int is = n && f && !strcmp(n, "_engine_run_backward") && fl >= sizeof tail - 1 &&
             !strcmp(f + fl - (sizeof tail - 1), tail);
    PY(PyErr_Clear)();
    trlat_py_drop(name);
    trlat_py_drop(file);
    if (is) {
        PY(Py_IncRef)(code);
        known = code;
    }
    return is;
}

static uint64_t waiting_user_site(void)
{
    if (!PY(PyInterpreterState_Get) || !PY(PyInterpreterState_ThreadHead) || !PY(PyThreadState_Next) ||
        !PY(PyThreadState_GetFrame))
        return 0;
    void *me = PY(PyThreadState_Get)();
    for (void *ts = PY(PyInterpreterState_ThreadHead)(PY(PyInterpreterState_Get)()); ts;
         ts = PY(PyThreadState_Next)(ts)) {
        if (ts == me)
            continue;
        PyObject *f = PY(PyThreadState_GetFrame)(ts);
        uint64_t user = 0;
        int waiting = 0;
        for (int depth = 0; f && !user && depth < (waiting ? MAX_USER_DEPTH : 3); depth++) {
            PyObject *code = PY(PyFrame_GetCode)(f);
            if (waiting) {
                struct trlat_pysite_hit hit;
                frame_hit(f, code, frame_offset(f), &hit);
                if (hit.level == TRLAT_PYSITE_USER)
                    user = hit.site;
            } else {
                waiting = is_engine_wait(code);
            }
            PY(Py_DecRef)(code);
            PyObject *back = PY(PyFrame_GetBack)(f);
            PY(Py_DecRef)(f);
            f = back;
        }
        if (f)
            PY(Py_DecRef)(f);
        PY(PyErr_Clear)();
        if (user)
            return user;
    }
    return 0;
}

/* The running frame without a frame object (CPython 3.12 and 3.13).
 * PyEval_GetFrame makes a PyFrameObject for a function's frame the first
 * time it is asked, and CPython frees it when the function returns: ~350
 * instructions and an allocation for each call of a Python function that
 * launches (`def add(x, y): add_kernel[grid](...)`), as much as a
 * fast-path hit's key. The interpreter frame PyEval_GetFrame wraps is the
 * thread state's cframe->current_frame in 3.12 (PyThreadState.cframe at
 * offset 56, _PyCFrame.current_frame its first word) and its current_frame
 * in 3.13 (offset 72; Include/cpython/pystate.h, offsetof against each
 * version's headers), and PyUnstable_InterpreterFrame_GetCode/GetLasti
 * answer for it what PyFrame_GetCode/GetLasti answer for the frame object.
 * The frames beyond it are each one's `previous` (offset 8 in both), the
 * entry frames of a call from C among them: owned by the C stack (`owner`,
 * offset 70 in both, FRAME_OWNED_BY_CSTACK), which PyFrame_GetBack skips
 * (3.12's run the interpreter's trampoline code; 3.13's have None).
 * Read so only after FRAME_AGREE calls found the frame object's f_frame
 * (offset 24) that same pointer, compared before anything is read through
 * it, and both walks the same sites; off for the process at the first
 * difference. Builds whose
 * objects are laid out otherwise (free-threaded: ob_type is not the second
 * word) walk. The GIL guards the state.
 * Once reading, a frame's code and offset are read from the frame itself,
 * without the two calls and a reference: its code is its first word
 * (f_code in 3.12, f_executable in 3.13) and its instruction pointer the
 * word at offset 56 (prev_instr, instr_ptr), which lies a fixed distance
 * past the code's address plus the offset. Both are checked on every frame
 * of the comparing walks, and read so only where they held on all. */
enum {
    TS_CFRAME_312 = 56,
    TS_FRAME_313 = 72,
    IF_CODE = 0,
    IF_PREVIOUS = 8,
    IF_IP = 56,
    IF_OWNER = 70,
    OWNED_BY_CSTACK = 3,
    FO_F_FRAME = 24,
    FRAME_AGREE = 16
};
static struct {
    int state; /* 0 unresolved, 1 comparing, 2 reading, -1 off */
    int v313;  /* the frame in the thread state itself, not behind a _PyCFrame */
    int ip;    /* the code and offset read from the frame: 0 not yet seen, 1 agreed so far, -1 off */
    unsigned agreed;
    intptr_t ip_base;          /* instruction pointer - code address - offset, when ip is 1 */
    PyObject *(*code)(void *); /* PyUnstable_InterpreterFrame_GetCode: a new reference */
    int (*lasti)(void *);      /* PyUnstable_InterpreterFrame_GetLasti */
} FR;

static void frame_resolve(void)
{
    FR.state = -1;
    const unsigned long *pv = trlat_real_dlsym(RTLD_DEFAULT, "Py_Version");
    const void *none = trlat_real_dlsym(RTLD_DEFAULT, "_Py_NoneStruct");
    const void *none_type = trlat_real_dlsym(RTLD_DEFAULT, "_PyNone_Type");
    if (!pv || ((*pv >> 16) != 0x030c && (*pv >> 16) != 0x030d) || !PY(PyThreadState_Get) || !none ||
        ((const void *const *)none)[1] != none_type)
        return;
    FR.v313 = (*pv >> 16) == 0x030d;
    FR.code = (PyObject * (*)(void *)) trlat_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetCode");
    FR.lasti = (int (*)(void *))trlat_real_dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLasti");
    if (FR.code && FR.lasti && PY(PyCode_Addr2Line))
        FR.state = 1;
}

/* The running _PyInterpreterFrame. 3.12: NULL when its _PyCFrame is not on
 * this thread's stack above us (where the eval loop keeps it). */
static void *frame_running(void)
{
    const char *ts = (const char *)PY(PyThreadState_Get)();
    if (FR.v313)
        return *(void *const *)(ts + TS_FRAME_313);
    char here;
    const void *cf = *(const void *const *)(ts + TS_CFRAME_312);
    if ((uintptr_t)cf - (uintptr_t)&here > ((uintptr_t)1 << 28))
        return NULL;
    return *(void *const *)cf;
}

/* One frame of a walk out: the kernel's site is the first frame outside the
 * runtime, the user's the first of the program's own, where the walk ends
 * (returns 1). */
static inline int walk_step(const struct trlat_pysite_hit *hit, uint64_t *kernel, uint64_t *user)
{
    if (hit->level != TRLAT_PYSITE_RUNTIME && !*kernel)
        *kernel = hit->site;
    if (hit->level != TRLAT_PYSITE_USER)
        return 0;
    *user = hit->site;
    return 1;
}

/* Reading the frames' words, the thread's frames seen last, by instruction
 * pointer: a frame's site and level without the table's lookup. An entry is
 * kept only for a code the table holds, which no other object can replace
 * at its address, so an instruction pointer names one (code, offset) for
 * as long as the process runs. Per thread: no entry is ever read half
 * written. */
#define NEAR 128 /* a power of 2 */
struct trlat_pysite_near {
    struct {
        const void *code, *ip;
        struct trlat_pysite_hit hit;
    } e[NEAR];
};

static struct trlat_pysite_near *near_of_thread(void)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    if (ts && !ts->pynear)
        ts->pynear = calloc(1, sizeof *ts->pynear); /* once per thread state; none: the table's lookups */
    return ts ? ts->pynear : NULL;
}

/* A frame's hit from its words (FR.ip on): from the thread's near entries,
 * else the table, learning it on first sight. */
static void words_hit(struct trlat_pysite_near *near, PyObject *code, const char *ip, struct trlat_pysite_hit *hit)
{
    unsigned i = (unsigned)((uintptr_t)ip >> 1) & (NEAR - 1);
    if (near && near->e[i].ip == ip && near->e[i].code == code) {
        *hit = near->e[i].hit;
        return;
    }
    int lasti = (int)(ip - (const char *)code - FR.ip_base);
    if (!trlat_pysite_lookup(code, lasti, hit)) {
        learn_line(code, lasti, PY(PyCode_Addr2Line)(code, lasti), hit);
        if (!trlat_pysite_lookup(code, lasti, hit))
            return; /* the table is full: its code is not held */
    }
    if (near) {
        near->e[i].code = code;
        near->e[i].ip = ip;
        near->e[i].hit = *hit;
    }
}

/* While comparing: the frame's own words against what the calls answered
 * (FR.ip). */
static void frame_words_check(const void *fr, const PyObject *code, int lasti)
{
    intptr_t base = (intptr_t) * (const char *const *)((const char *)fr + IF_IP) - (intptr_t)code - lasti;
    if (*(PyObject *const *)((const char *)fr + IF_CODE) != code || (FR.ip && base != FR.ip_base))
        FR.ip = -1;
    else if (!FR.ip)
        FR.ip = 1, FR.ip_base = base;
}

/* Both sites from the interpreter frames (FR on), learning each frame not
 * seen before: 0 when there is no frame to start from. */
static int sites_direct(uint64_t *pair)
{
    void *fr = frame_running();
    if (!fr)
        return 0;
    uint64_t kernel = 0, user = 0;
    int done = 0, words = FR.state == 2 && FR.ip == 1;
    struct trlat_pysite_near *near = words ? near_of_thread() : NULL;
    for (int depth = 0; fr && !done && depth < (kernel ? MAX_USER_DEPTH : MAX_DEPTH); depth++) {
        const char *f = fr;
        fr = *(void *const *)(f + IF_PREVIOUS);
        if (f[IF_OWNER] == OWNED_BY_CSTACK) { /* an entry frame: not counted, as skipped */
            depth--;
            continue;
        }
        struct trlat_pysite_hit hit;
        if (words) { /* the frame holds its code while the GIL is held */
            PyObject *code = *(PyObject *const *)(f + IF_CODE);
            if (code != trlat_py.none) { /* else an entry frame */
                words_hit(near, code, *(const char *const *)(f + IF_IP), &hit);
                done = walk_step(&hit, &kernel, &user);
            }
            continue;
        }
        PyObject *code = FR.code((void *)f);
        if (code != trlat_py.none) {
            int lasti = FR.lasti((void *)f);
            if (FR.state == 1 && FR.ip >= 0)
                frame_words_check(f, code, lasti);
            if (!trlat_pysite_lookup(code, lasti, &hit))
                learn_line(code, lasti, PY(PyCode_Addr2Line)(code, lasti), &hit);
            done = walk_step(&hit, &kernel, &user);
        }
        PY(Py_DecRef)(code); /* a known key's code is held by the table */
    }
    *pair = kernel ? trlat_pysite_pair(kernel, user ? user : waiting_user_site()) : 0;
    return 1;
}

static void frames_disagree(void)
{
    FR.state = -1;
    static atomic_flag once;
    trlat_log_once(&once, "Python call sites are read through frame objects from now on (the running "
                          "interpreter frame did not read as this CPython's)");
}

/* While comparing: the running frame f read both ways. 1 when they agree
 * so far. */
static int frame_compare(PyObject *f, PyObject *code, int64_t off)
{
    void *fr = frame_running();
    int same = fr && fr == *(void *const *)((const char *)f + FO_F_FRAME);
    if (same) {
        PyObject *c = FR.code(fr);
        same = c == code && FR.lasti(fr) == off;
        PY(Py_DecRef)(c);
    }
    if (!same)
        frames_disagree();
    return same;
}

/* While comparing: the walk through frame objects found pair; so must the
 * direct one. */
static void sites_compare(uint64_t pair)
{
    uint64_t direct = 0;
    if (!sites_direct(&direct) || direct != pair)
        frames_disagree();
    else if (++FR.agreed >= FRAME_AGREE)
        FR.state = 2;
}

unsigned trlat_pyhook_sites_direct(void)
{
    return FR.state == 2 ? FR.agreed : 0;
}

const char *trlat_pyhook_frame_reads(void)
{
    return FR.state != 2 ? "frame_objects" : FR.ip == 1 ? "interpreter_words" : "interpreter";
}

uint64_t trlat_pyhook_caller_site(void)
{
    if (__builtin_expect(FR.state == 2, 1)) {
        uint64_t pair;
        if (sites_direct(&pair))
            return pair;
    } else if (!FR.state) {
        frame_resolve();
    }
    PyObject *f = PY(PyEval_GetFrame)(); /* borrowed: the running frame */
    PyObject *owned = NULL;              /* the outer frames, new references */
    uint64_t kernel = 0, user = 0;
    int compare = 0;
    for (int depth = 0; f && depth < (kernel ? MAX_USER_DEPTH : MAX_DEPTH); depth++) {
        PyObject *code = PY(PyFrame_GetCode)(f);
        int64_t off = frame_offset(f);
        if (depth == 0 && FR.state == 1)
            compare = frame_compare(f, code, off);
        struct trlat_pysite_hit hit;
        frame_hit(f, code, off, &hit);
        PY(Py_DecRef)(code);
        if (walk_step(&hit, &kernel, &user))
            break;
        PyObject *back = PY(PyFrame_GetBack)(f);
        if (!back && PY(PyErr_Occurred)())
            PY(PyErr_Clear)(); /* no memory for the frame object: no further site */
        if (owned)
            PY(Py_DecRef)(owned);
        f = owned = back;
    }
    if (owned)
        PY(Py_DecRef)(owned);
    uint64_t pair = kernel ? trlat_pysite_pair(kernel, user ? user : waiting_user_site()) : 0;
    if (compare)
        sites_compare(pair);
    return pair;
}
