/* The report when a signal ends the process: SIGTERM, SIGINT, SIGHUP and
 * SIGQUIT, whose default action terminates it without running atexit.
 * trlat's handler hands the report to a watcher thread (only async-signal-
 * safe work in the handler), waits for it at most TRLAT_SIGNAL_WAIT_MS, then
 * restores the default action and re-raises, so that the process ends by
 * the same signal (a core for SIGQUIT) as without trlat. A signal the
 * program ignores stays ignored; one it handles reaches its handler. */
#ifndef TRLAT_SIGNALS_H
#define TRLAT_SIGNALS_H

/* How long a signal waits for the report before the process ends anyway. */
#define TRLAT_SIGNAL_WAIT_MS 5000

/* At trlat's start: the watcher thread, then the handlers. */
void trlat_signals_start(void);
/* In a forked child: a watcher of its own (the parent's stayed there). */
void trlat_signals_after_fork_child(void);
/* trlat_finish brackets its work: a signal meant to end the process that
 * arrives on the thread writing the report is held until the report is out
 * (or the wait is over), then ends it. */
void trlat_signals_finish_begin(void);
void trlat_signals_finish_end(void);

#endif
