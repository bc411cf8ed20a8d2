/* The bindings' call arguments that are no setting: a spawn's kill grace,
 * the process's retry budget, an RTT statistics window. Rows like the
 * settings table's, so mcpp_setting_check and mcpp_setting_range check
 * them and say what they allow in each binding's unit, in one sentence. */
#include <string.h>

#include "internal.h"

#define MAXMS ((double)MCPP_MAX_MS)

static const mcpp_setting_info rows[] = {
    {"kill_grace_ms", MCPP_UNIT_MS, MCPP_DEFAULT_KILL_GRACE_MS,
     MCPP_DEFAULT_KILL_GRACE_MS, 1, MAXMS, "SIGKILL at once", NULL, NULL,
     "How long a closed server has between SIGTERM and SIGKILL."},
    {"retry_budget.burst", MCPP_UNIT_COUNT, MCPP_RETRY_BUDGET_BURST,
     MCPP_RETRY_BUDGET_BURST, 1, MCPP_MAX_RETRY_BUDGET_BURST, NULL, NULL, NULL,
     "Respawns the process may make at once."},
    {"retry_budget.per_second", MCPP_UNIT_RATIO, MCPP_RETRY_BUDGET_PER_SECOND,
     MCPP_RETRY_BUDGET_PER_SECOND, MCPP_MIN_RETRY_BUDGET_PER_SECOND,
     MCPP_MAX_RETRY_BUDGET_PER_SECOND, NULL, NULL, NULL,
     "Respawns the process's budget regains each second."},
    {"rtt_window", MCPP_UNIT_COUNT, MCPP_RTT_WINDOW, MCPP_RTT_WINDOW, 1,
     MCPP_MAX_RTT_WINDOW, NULL, NULL, NULL,
     "How many recent RTTs the statistics keep for percentiles."},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

const mcpp_setting_info *mcpp_arguments_table(size_t *n) {
  if (n) *n = N_ROWS;
  return rows;
}

const mcpp_setting_info *mcpp_argument_find(const char *name) {
  for (size_t i = 0; name && i < N_ROWS; i++)
    if (strcmp(rows[i].name, name) == 0) return &rows[i];
  return NULL;
}
