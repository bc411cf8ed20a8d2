/* mcpping process-state names: one spelling of mcpp_process_state for
 * every binding and record. Included by mcpping.h (after the enum). */
#ifndef MCPPING_PROCESS_H
#define MCPPING_PROCESS_H

#include "mcpping/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "running", "stopped", "exited" or "unknown" (MCPP_PROCESS_UNKNOWN and
 * any value out of range). */
const char *mcpp_process_state_name(mcpp_process_state state);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_PROCESS_H */
