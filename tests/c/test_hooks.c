/* The test-only variables of csrc/src/engine/test_hooks.h: linked into the test
 * programs, never into the library. */
#include "engine/test_hooks.h"

int mcpp__proc_force_backoff;
int mcpp__runtime_loop_close_rc;
int mcpp__proc_sigkill_lost;
void (*mcpp__proc_after_spawn)(int pid);
_Atomic unsigned long mcpp__conn_read_aheads;
_Atomic unsigned long long mcpp__conn_armed_ms;
_Atomic unsigned long mcpp__conn_arms;
int mcpp__detector_fixed;
_Atomic unsigned long mcpp__watchdog_wakes;
_Atomic unsigned long mcpp__conn_host_reads, mcpp__conn_uv_reads;
_Atomic unsigned long mcpp__idle_watchdog_woken;
_Atomic int mcpp__watchdog_idle;
_Atomic long mcpp__default_allocs, mcpp__default_fail_at, mcpp__default_live;
