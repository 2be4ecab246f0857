/* Launches fake kernels through every route a program can take to the
 * driver, for trlat's integration tests: `launcher MODE [N]`. Linked with
 * the fake libcuda (-lcuda); prints what the driver saw, so the tests can
 * compare it with trlat's report. */
#include <cuda.h>
#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void **, void **);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
CUresult cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
unsigned long fake_cuda_calls(const char *entry);
CUfunction fake_cuda_function(const char *name);

typedef CUresult (*lk_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                         void **, void **);
typedef CUresult (*lkex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*mgf_t)(CUfunction *, CUmodule, const char *);

static long n = 10;

static CUfunction get(const char *name)
{
    CUfunction f;
    CUresult rc = cuModuleGetFunction(&f, (CUmodule)0x1000, name);
    if (rc) {
        fprintf(stderr, "cuModuleGetFunction(%s) = %d\n", name, rc);
        exit(3);
    }
    return f;
}

static int check(CUresult rc, CUresult *last)
{
    *last = rc;
    return rc != CUDA_SUCCESS;
}

static CUresult loop_lk(lk_t lk, CUfunction f)
{
    CUresult rc = CUDA_SUCCESS;
    for (long i = 0; i < n; i++)
        check(lk(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), &rc);
    return rc;
}

static CUresult loop_lkex(lkex_t lkex, CUfunction f)
{
    CUlaunchConfig cfg = {
        .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1};
    CUresult rc = CUDA_SUCCESS;
    for (long i = 0; i < n; i++)
        check(lkex(&cfg, f, NULL, NULL), &rc);
    return rc;
}

static void *thread_main(void *arg)
{
    loop_lk(cuLaunchKernel, (CUfunction)arg);
    return NULL;
}

static void *exit_from_thread(void *arg)
{
    loop_lk(cuLaunchKernel, (CUfunction)arg);
    printf("exiting from a thread\n");
    fflush(stdout);
    exit(0);
}

/* The wait modes: the program's own handler of the four signals that end
 * a process, installed before the first CUDA call. */
static const int wait_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
static volatile sig_atomic_t got_sig, got_mask_ok, got_from_parent = -1;

static void note_mask(int sig)
{
    sigset_t cur; /* its sa_mask (SIGUSR1) and the signal itself are blocked while it runs */
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    got_mask_ok = sigismember(&cur, SIGUSR1) == 1 && sigismember(&cur, sig) == 1;
    got_sig = sig;
}

static void on_plain(int sig)
{
    note_mask(sig);
}

static void on_siginfo(int sig, siginfo_t *si, void *uc)
{
    got_from_parent = si && si->si_signo == sig && si->si_pid == getppid() && uc != NULL;
    note_mask(sig);
}

/* `wait N` and its variants: N launches, "ready PID" (the process to
 * signal), then it waits until stdin ends (or, with a handler, until that
 * ran: it exits 3), so that a test can signal a process with launches
 * recorded. wait_handler, wait_siginfo: the program's handlers, installed
 * before the first CUDA call; wait_ignore: the four signals ignored;
 * wait_fork: a child launches N more and is the one to signal, the parent
 * says how it ended; wait_locked: stderr's lock held meanwhile. */
static void wait_mode(const char *how)
{
    int handled = !strcmp(how, "handler") || !strcmp(how, "siginfo");
    sigset_t block, orig;
    sigemptyset(&block);
    for (int i = 0; i < 4 && (handled || !strcmp(how, "ignore")); i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGUSR1);
        if (!strcmp(how, "handler")) {
            sa.sa_handler = on_plain;
            sa.sa_flags = SA_RESTART;
        } else if (!strcmp(how, "siginfo")) {
            sa.sa_sigaction = on_siginfo;
            sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
        } else {
            sa.sa_handler = SIG_IGN;
        }
        sigaction(wait_sigs[i], &sa, NULL);
        sigaddset(&block, wait_sigs[i]);
    }
    if (handled) /* until sigsuspend: no signal lost between a check and the wait */
        pthread_sigmask(SIG_BLOCK, &block, &orig);
    loop_lk(cuLaunchKernel, get("wait_kernel"));
    if (!strcmp(how, "fork")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid > 0) {
            int status;
            waitpid(pid, &status, 0);
            printf("child ended: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            return;
        }
        loop_lk(cuLaunchKernel, get("wait_child_kernel"));
    }
    if (!strcmp(how, "locked")) /* the report's summary (stderr) cannot be written */
        flockfile(stderr);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (handled) {
        while (!got_sig)
            sigsuspend(&orig);
        struct sigaction cur;
        sigaction(got_sig, NULL, &cur);
        printf("handled %d mask_ok=%d from_parent=%d reset=%d\n", (int)got_sig, (int)got_mask_ok, (int)got_from_parent,
               cur.sa_handler == SIG_DFL);
        fflush(stdout);
        exit(3);
    }
    char c;
    for (;;) {
        ssize_t r = read(0, &c, 1);
        if (r == 0 || (r < 0 && errno != EINTR))
            break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: launcher MODE [N]\n");
        return 2;
    }
    const char *mode = argv[1];
    if (argc > 2)
        n = atol(argv[2]);
    CUresult rc = CUDA_SUCCESS;

    if (!strcmp(mode, "direct")) {
        rc = loop_lk(cuLaunchKernel, get("direct_kernel"));
    } else if (!strcmp(mode, "direct_ptsz")) {
        rc = loop_lk(cuLaunchKernel_ptsz, get("direct_ptsz_kernel"));
    } else if (!strcmp(mode, "direct_ex")) {
        rc = loop_lkex(cuLaunchKernelEx, get("direct_ex_kernel"));
    } else if (!strcmp(mode, "dlsym")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        mgf_t mgf = (mgf_t)dlsym(h, "cuModuleGetFunction");
        lkex_t lkex = (lkex_t)dlsym(h, "cuLaunchKernelEx");
        lk_t lk = (lk_t)dlsym(h, "cuLaunchKernel");
        CUfunction f, g;
        mgf(&f, (CUmodule)0x1000, "dlsym_ex_kernel");
        mgf(&g, (CUmodule)0x1000, "dlsym_kernel");
        rc = loop_lkex(lkex, f);
        rc |= loop_lk(lk, g);
        /* everything else is glibc's answer */
        printf("dlsym(nonexistent) = %p\n", dlsym(h, "cuNoSuchFunction"));
        printf("dlerror set: %d\n", dlerror() != NULL);
        printf("dlsym(cuLaunchCooperativeKernel) %s\n", dlsym(h, "cuLaunchCooperativeKernel") ? "found" : "NULL");
    } else if (!strcmp(mode, "procaddr") || !strcmp(mode, "procaddr_ptds") || !strcmp(mode, "procaddr_v1")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        int ptds = !strcmp(mode, "procaddr_ptds");
        cuuint64_t flags = ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
        void *lk = NULL, *lkex = NULL, *mgf = NULL, *gpa = NULL;
        if (!strcmp(mode, "procaddr_v1")) {
            gpa1_t gpa1 = (gpa1_t)dlsym(h, "cuGetProcAddress");
            gpa1("cuLaunchKernel", &lk, 11030, flags);
            gpa1("cuLaunchKernelEx", &lkex, 11080, flags);
            gpa1("cuModuleGetFunction", &mgf, 11030, flags);
            gpa1("cuGetProcAddress", &gpa, 11030, flags); /* v1 ABI */
            gpa1_t again = (gpa1_t)gpa;
            again("cuLaunchKernel", &lk, 11030, flags);
        } else {
            gpa2_t gpa2 = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
            CUdriverProcAddressQueryResult st;
            gpa2("cuGetProcAddress", &gpa, 12000, flags, &st); /* v2 ABI */
            gpa2_t again = (gpa2_t)gpa;
            again("cuLaunchKernel", &lk, 12000, flags, &st);
            again("cuLaunchKernelEx", &lkex, 12000, flags, &st);
            again("cuModuleGetFunction", &mgf, 12000, flags, &st);
            void *none = (void *)1;
            CUresult r = again("cuNoSuchFunction", &none, 12000, flags, &st);
            printf("missing symbol: rc=%d status=%d ptr=%p\n", r, (int)st, none);
        }
        CUfunction f, g;
        ((mgf_t)mgf)(&f, (CUmodule)0x1000, "procaddr_kernel");
        ((mgf_t)mgf)(&g, (CUmodule)0x1000, "procaddr_ex_kernel");
        rc = loop_lk((lk_t)lk, f);
        rc |= loop_lkex((lkex_t)lkex, g);
    } else if (!strcmp(mode, "library")) {
        CUkernel k;
        CUfunction f;
        cuLibraryGetKernel(&k, (CUlibrary)0x2000, "library_kernel");
        cuKernelGetFunction(&f, k);
        rc = loop_lk(cuLaunchKernel, f);
        rc |= loop_lk(cuLaunchKernel, (CUfunction)k); /* a CUkernel launched as a CUfunction */
    } else if (!strcmp(mode, "unnamed")) {
        rc = loop_lk(cuLaunchKernel, fake_cuda_function("never_looked_up_kernel"));
    } else if (!strcmp(mode, "invalid")) {
        rc = loop_lk(cuLaunchKernel, (CUfunction)(uintptr_t)0x42);
    } else if (!strcmp(mode, "threads")) {
        int nt = 8;
        pthread_t t[8];
        CUfunction f = get("threaded_kernel");
        for (int i = 0; i < nt; i++)
            pthread_create(&t[i], NULL, thread_main, f);
        for (int i = 0; i < nt; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "churn")) { /* many short-lived threads */
        CUfunction f = get("churn_kernel");
        for (int i = 0; i < 200; i++) {
            pthread_t t;
            pthread_create(&t, NULL, thread_main, f);
            pthread_join(t, NULL);
        }
    } else if (!strcmp(mode, "fork")) {
        CUfunction f = get("parent_kernel"), g = get("child_kernel");
        rc = loop_lk(cuLaunchKernel, f);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            loop_lk(cuLaunchKernel, g);
            loop_lk(cuLaunchKernel, g);
            printf("child %d launched %ld\n", getpid(), 2 * n);
            exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        printf("parent %d launched %ld\n", getpid(), n);
    } else if (!strcmp(mode, "fork_idle")) { /* the child never launches */
        rc = loop_lk(cuLaunchKernel, get("parent_kernel"));
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            exit(0);
        waitpid(pid, NULL, 0);
    } else if (!strcmp(mode, "exit_thread")) {
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, get("exit_thread_kernel"));
        pthread_join(t, NULL);
        return 9; /* not reached */
    } else if (!strncmp(mode, "wait", 4) && (mode[4] == 0 || mode[4] == '_')) {
        wait_mode(mode[4] ? mode + 5 : "default");
    } else if (!strcmp(mode, "cooperative")) {
        CUfunction f = get("coop_kernel");
        for (long i = 0; i < n; i++)
            check(cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL), &rc);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("rc=%d\n", (int)rc);
    const char *entries[] = {"cuLaunchKernel",
                             "cuLaunchKernel_ptsz",
                             "cuLaunchKernelEx",
                             "cuLaunchKernelEx_ptsz",
                             "cuLaunchCooperativeKernel",
                             "alias_cuLaunchKernel",
                             NULL};
    for (int i = 0; entries[i]; i++)
        printf("driver %s %lu\n", entries[i], fake_cuda_calls(entries[i]));
    return rc ? 1 : 0;
}
