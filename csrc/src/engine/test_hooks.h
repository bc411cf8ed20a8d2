/*
 * What the C tests observe or force inside the library. The variables live
 * in tests/c/test_hooks.c and exist only in builds made with
 * -DMCPP_TEST_HOOKS (the Makefile's test, sanitizer and fuzz builds); every
 * shipped build (make install, the wheel, the addon) has none of them.
 */
#ifndef MCPP_TEST_HOOKS_H
#define MCPP_TEST_HOOKS_H

#ifdef MCPP_TEST_HOOKS
/* Watch exits with the waitpid backoff timer even where exit fds exist. */
extern int mcpp__proc_force_backoff;
/* uv_loop_close()'s result when the last runtime was freed. */
extern int mcpp__runtime_loop_close_rc;
/* Our SIGKILLs do not take, as for a server stuck in the kernel (D state):
 * the signal sent is 0, a probe. */
extern int mcpp__proc_sigkill_lost;
#define MCPP__HOOK_FORCE_BACKOFF() (mcpp__proc_force_backoff)
#define MCPP__HOOK_SIGKILL() (mcpp__proc_sigkill_lost ? 0 : SIGKILL)
/* Called with the server's pid right after the spawn returned, before
 * anything else (a test's host dies there). */
extern void (*mcpp__proc_after_spawn)(int pid);
#define MCPP__HOOK_AFTER_SPAWN(pid)                                         \
  (mcpp__proc_after_spawn ? mcpp__proc_after_spawn(pid) : (void)0)
#define MCPP__HOOK_LOOP_CLOSED(rc) (mcpp__runtime_loop_close_rc = (rc))
/* The driver's read-ahead reads (before a timer expires something), and
 * the loop time the driver last armed a connection's timer for, and how
 * many times it armed one. Atomic: runtimes drive connections from their
 * own threads. */
extern _Atomic unsigned long mcpp__conn_read_aheads;
extern _Atomic unsigned long long mcpp__conn_armed_ms;
extern _Atomic unsigned long mcpp__conn_arms;
#define MCPP__HOOK_READ_AHEAD() (mcpp__conn_read_aheads++)
#define MCPP__HOOK_ARMED(ms) \
  ((void)(mcpp__conn_armed_ms = (ms)), (void)mcpp__conn_arms++)
/* The detector as it was before corroboration: failed pings decide alone,
 * at the configured timeout (bench/detector's baseline). */
extern int mcpp__detector_fixed;
#define MCPP__HOOK_DETECTOR_FIXED() (mcpp__detector_fixed)
/* How often a host-mode watchdog woke up (a tick, or its idle poll). */
extern _Atomic unsigned long mcpp__watchdog_wakes;
#define MCPP__HOOK_WATCHDOG_WAKE() (mcpp__watchdog_wakes++)
/* Reads of a server's stdout by the runtime's host (host-owned fds) and by
 * libuv's own read callback: a test proves which one reads. */
extern _Atomic unsigned long mcpp__conn_host_reads, mcpp__conn_uv_reads;
#define MCPP__HOOK_HOST_READ() (mcpp__conn_host_reads++)
#define MCPP__HOOK_UV_READ() (mcpp__conn_uv_reads++)
/* The host woke an idle watchdog for a timer it moved earlier. */
extern _Atomic unsigned long mcpp__idle_watchdog_woken;
#define MCPP__HOOK_IDLE_WATCHDOG_WOKEN() (mcpp__idle_watchdog_woken++)
/* 1 while the watchdog sleeps idle in its poll (set once it published
 * when it will look again), so a test can wait for that state instead of
 * guessing it from elapsed time. */
extern _Atomic int mcpp__watchdog_idle;
#define MCPP__HOOK_WATCHDOG_IDLE(on) (mcpp__watchdog_idle = (on))
/* The default allocator (mcpp_default_allocator: the SSE parser, the
 * renewal, the HTTP session) counts its allocations, fails the one whose
 * count is mcpp__default_fail_at (0: none), and counts its live blocks,
 * so an out-of-memory test fails each allocation of a scenario in turn. */
extern _Atomic long mcpp__default_allocs, mcpp__default_fail_at, mcpp__default_live;
#define MCPP__HOOK_DEFAULT_ALLOC_FAILS() (++mcpp__default_allocs == mcpp__default_fail_at)
#define MCPP__HOOK_DEFAULT_LIVE(n) (mcpp__default_live += (n))
#else
#define MCPP__HOOK_FORCE_BACKOFF() 0
#define MCPP__HOOK_SIGKILL() SIGKILL
#define MCPP__HOOK_AFTER_SPAWN(pid) ((void)(pid))
#define MCPP__HOOK_LOOP_CLOSED(rc) ((void)(rc))
#define MCPP__HOOK_READ_AHEAD() ((void)0)
#define MCPP__HOOK_ARMED(ms) ((void)(ms))
#define MCPP__HOOK_DETECTOR_FIXED() 0
#define MCPP__HOOK_WATCHDOG_WAKE() ((void)0)
#define MCPP__HOOK_HOST_READ() ((void)0)
#define MCPP__HOOK_UV_READ() ((void)0)
#define MCPP__HOOK_IDLE_WATCHDOG_WOKEN() ((void)0)
#define MCPP__HOOK_WATCHDOG_IDLE(on) ((void)(on))
#define MCPP__HOOK_DEFAULT_ALLOC_FAILS() 0
#define MCPP__HOOK_DEFAULT_LIVE(n) ((void)(n))
#endif

#endif
