/* The tally's internal entry points for the engine and the runtime: a
 * slot is the pointer an engine or runtime connection counts through. */
#ifndef MCPPING_METRICS_TALLY_INTERNAL_H
#define MCPPING_METRICS_TALLY_INTERNAL_H

#include "mcpping/metrics_tally.h"

/* Points *slot at cell (holding a reference), dropping the old one. */
void mcpp__metrics_slot_set(mcpp_metrics_cell **slot, mcpp_metrics_cell *cell);
/* Counts ev into *slot's cell if any; a CLOSED event also empties the slot. */
void mcpp__metrics_slot_observe(mcpp_metrics_cell **slot,
                                const struct mcpp_event *ev);
/* Forgets every open cell and total (C tests). */
void mcpp__metrics_tally_reset(void);

#endif
