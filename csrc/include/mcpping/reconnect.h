/* mcpping the pieces of reconnecting every host shares: backoff and the retry budget.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_RECONNECT_H
#define MCPPING_RECONNECT_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------------- reconnect
 *
 * The pieces of reconnecting that every host shares (the runtime uses them
 * for settings.reconnect; `mcpping wrap --restart` too). Pure: the caller
 * gives the time and the randomness. */

/* Fills *policy with the defaults of mcpp_reconnect (enabled = 0). */
void mcpp_reconnect_default(mcpp_reconnect *policy);

/* Returns NULL if *policy is disabled or every field is in range, else a
 * static sentence naming the first bad field ("reconnect.jitter must be
 * between 0 and 1"). mcpp_settings_problem includes it. */
const char *mcpp_reconnect_problem(const mcpp_reconnect *policy);

/* The delay before attempt `attempt` (1 for the first), in µs:
 * initial_ms * multiplier^(attempt - 1), at most max_delay_ms, spread by
 * jitter with `random` (any 64-bit value, uniformly drawn by the caller),
 * and at most max_delay_ms again. */
uint64_t mcpp_reconnect_delay_us(const mcpp_reconnect *policy,
                                 uint32_t attempt, uint64_t random);

/* A token bucket shared by every connection of a process, so that a fleet
 * whose servers fail at once reconnects at a bounded rate: at most `burst`
 * attempts at once, then `per_second`. Reservations, as GCRA does them:
 * each attempt takes a slot; in any window of w seconds at most
 * burst + w * per_second attempts run. */
typedef struct mcpp_retry_budget {
  uint64_t interval_us;  /* 1 / per_second */
  uint64_t tolerance_us; /* (burst - 1) * interval_us */
  uint64_t tat_us;       /* the theoretical arrival time of the next slot */
} mcpp_retry_budget;

#define MCPP_RETRY_BUDGET_BURST 10u      /* the runtime's default */
#define MCPP_RETRY_BUDGET_PER_SECOND 2.0 /* the runtime's default */
#define MCPP_MAX_RETRY_BUDGET_BURST 1000000u
#define MCPP_MIN_RETRY_BUDGET_PER_SECOND 0.001
#define MCPP_MAX_RETRY_BUDGET_PER_SECOND 1e6

/* Sets up a budget of `burst` (1..MCPP_MAX_RETRY_BUDGET_BURST) attempts at
 * once and `per_second` (MCPP_MIN_ to MCPP_MAX_RETRY_BUDGET_PER_SECOND)
 * after that. Returns 0 or
 * MCPP_ERR_INVALID_ARGUMENT (the budget unchanged). */
int mcpp_retry_budget_init(mcpp_retry_budget *budget, uint32_t burst,
                           double per_second);

/* Takes a slot for an attempt wanted at `at` (µs, the caller's monotonic
 * clock); returns when it may run: `at`, or later if the budget is spent. */
uint64_t mcpp_retry_budget_take(mcpp_retry_budget *budget, uint64_t at);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_RECONNECT_H */
