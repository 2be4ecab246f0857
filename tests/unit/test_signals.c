/* interpose/signals.c while the report is being written: a SIGTERM that
 * arrives then ends the process once the report is out (on the writing
 * thread the signal is held, on another it waits for it), and still ends it,
 * by the same signal, after the wait's bound when the writer never finishes.
 * Each case runs in a child of its own, where trlat starts; a module whose
 * finish takes a given time stands for the report writer. */
#include "interpose/signals.h"
#include "interpose/lifecycle.h"
#include "tests/unit/check_main.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int to_parent[2];
static int finish_ms; /* how long the stand-in writer takes; < 0: forever */

static void say(char c)
{
    if (write(to_parent[1], &c, 1) != 1)
        _exit(90);
}

static void slow_finish(void)
{
    say('s');
    if (finish_ms < 0)
        for (;;)
            pause();
    struct timespec ts = {finish_ms / 1000, (finish_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    say('d');
}

static const struct trlat_module slow = {.name = "slow", .finish = slow_finish};

static void *finish_blocked(void *unused)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s, NULL); /* the signal goes to the main thread */
    trlat_finish();
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* In a child: trlat started, the writer taking ms, run on this thread (or,
 * on_thread, on another one while this one waits); SIGTERM sent once the
 * writer started. Returns the wait status; *secs: from the signal to the
 * end; *wrote: whether the writer got to its end. */
static int run(int ms, int on_thread, double *secs, int *wrote)
{
    ck_assert_int_eq(pipe(to_parent), 0);
    finish_ms = ms;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(to_parent[0]);
        signal(SIGTERM, SIG_DFL); /* not Check's, which signals the whole group */
        if (trlat_active() != 1)
            _exit(91);
        trlat_module_register(&slow);
        if (on_thread) {
            pthread_t t;
            if (pthread_create(&t, NULL, finish_blocked, NULL) != 0)
                _exit(92);
            for (;;)
                pause();
        }
        trlat_finish();
        _exit(93); /* not reached: the held signal ends it */
    }
    close(to_parent[1]);
    char c = 0;
    ck_assert_int_eq(read(to_parent[0], &c, 1), 1);
    ck_assert_int_eq(c, 's');
    double t0 = now();
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    *secs = now() - t0;
    *wrote = read(to_parent[0], &c, 1) == 1 && c == 'd';
    close(to_parent[0]);
    return status;
}

START_TEST(held_on_the_writing_thread_until_written)
{
    double secs;
    int wrote, status = run(300, 0, &secs, &wrote);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status 0x%x", status);
    ck_assert_msg(wrote, "the process ended before the report was out");
    ck_assert_msg(secs >= 0.25 && secs < 4, "ended %.2f s after the signal", secs);
}
END_TEST

START_TEST(waits_on_another_thread_until_written)
{
    double secs;
    int wrote, status = run(300, 1, &secs, &wrote);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status 0x%x", status);
    ck_assert_msg(wrote, "the process ended before the report was out");
    ck_assert_msg(secs >= 0.25 && secs < 4, "ended %.2f s after the signal", secs);
}
END_TEST

START_TEST(stuck_writer_ends_after_the_bound)
{
    double secs, bound = TRLAT_SIGNAL_WAIT_MS / 1000.0;
    int wrote, status = run(-1, 0, &secs, &wrote);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status 0x%x", status);
    ck_assert(!wrote);
    ck_assert_msg(secs >= bound - 0.5 && secs < bound + 4, "ended %.2f s after the signal", secs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("signals");
    TCase *t = tcase_create("report being written");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, held_on_the_writing_thread_until_written);
    tcase_add_test(t, waits_on_another_thread_until_written);
    tcase_add_test(t, stuck_writer_ends_after_the_bound);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
