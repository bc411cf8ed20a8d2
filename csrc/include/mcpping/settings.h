/* mcpping settings table: every setting of mcpp_settings (and its
 * mcpp_reconnect) once, with its default, range, unit and meaning, so that
 * the engine's own check, the bindings' option checks and every sentence
 * that refuses a value come from one place. Included by mcpping.h. */
#ifndef MCPPING_SETTINGS_H
#define MCPPING_SETTINGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mcpp_setting_unit {
  MCPP_UNIT_MS = 0,      /* a time: whole milliseconds in C */
  MCPP_UNIT_COUNT = 1,   /* a whole number */
  MCPP_UNIT_PERCENT = 2, /* a whole number of percent */
  MCPP_UNIT_BYTES = 3,   /* a whole number of bytes */
  MCPP_UNIT_RATIO = 4,   /* a real number */
  MCPP_UNIT_FLAG = 5,    /* 0 or 1 */
  MCPP_UNIT_CHOICE = 6,  /* one of `choices` (its index is the C value) */
  MCPP_UNIT_TEXT = 7     /* a string of at most max bytes */
} mcpp_setting_unit;

typedef struct mcpp_setting_info {
  /* The field: "timeout_ms", "reconnect.initial_ms". Bindings derive their
   * own spelling from it (Python drops "_ms" and counts seconds, Node
   * writes it in camelCase). */
  const char *name;
  mcpp_setting_unit unit;
  /* What mcpp_settings_default (or mcpp_reconnect_default) writes. */
  double def;
  /* The library's policy: the default the bindings, `mcpping wrap` and
   * the command use. It differs from def only where C's zero-initialised
   * settings must keep a feature off (interval_ms: keepalive). */
  double policy;
  /* The allowed range, in `unit`. */
  double min, max;
  /* Non-NULL: 0 is allowed too, outside [min, max], and means this. */
  const char *zero;
  /* Non-NULL: another setting whose value raises min (interval_ms is at
   * least min_interval_ms, reconnect.max_delay_ms at least initial_ms). */
  const char *floor;
  /* MCPP_UNIT_CHOICE: the names, "|"-separated, in C value order. */
  const char *choices;
  /* One sentence for documentation and --help. */
  const char *meaning;
} mcpp_setting_info;

/* Every setting, in the order mcpp_settings declares them; *n gets the
 * count. The table is static and never changes. */
const mcpp_setting_info *mcpp_settings_table(size_t *n);

/* The setting of that name ("timeout_ms", "reconnect.jitter"), else NULL. */
const mcpp_setting_info *mcpp_setting_find(const char *name);

/* Bindings write time settings in their own unit: Node in ms, Python in
 * seconds. The sentences below then show every number in that unit. */
#define MCPP_IN_MS 0
#define MCPP_IN_SECONDS 1

/* Writes into buf (NUL-terminated, truncated to size) the values the
 * setting allows, in the caller's unit: "between 0.001 and 2147483.647
 * seconds", "0 (off) or between 10 and 2147483647 ms", "an integer between
 * 1 and 1000". low, if not NaN, is a raised lower bound in the caller's
 * unit, named low_name (the floor setting's name as the caller writes it).
 * Returns buf. Bindings use it for their own "wrong type" sentences. */
const char *mcpp_setting_range(const mcpp_setting_info *info, int in_unit,
                               double low, const char *low_name, char *buf,
                               size_t size);

/* Checks one value of a numeric setting, given in the caller's unit (see
 * mcpp_setting_range for in_unit, low and low_name). Returns 0 and sets
 * *out to the value in C's unit (whole ms for times, rounded to nearest),
 * or MCPP_ERR_INVALID_ARGUMENT and writes the sentence that refuses it,
 * "<shown> must be <range>, not <value>", into buf. NaN and infinities are
 * refused; a whole-number setting refuses fractions; a time rounds. */
int mcpp_setting_check(const mcpp_setting_info *info, const char *shown,
                       double value, int in_unit, double low,
                       const char *low_name, double *out, char *buf,
                       size_t size);

/* Checks one value of a text setting (probe_method: a method name), len
 * bytes: 0, or MCPP_ERR_INVALID_ARGUMENT with "<shown> must be a method
 * name of at most 128 bytes without control characters" in buf. The
 * bindings keep their own spellings of "automatic" and "none". */
int mcpp_setting_check_text(const mcpp_setting_info *info, const char *shown,
                            const char *value, size_t len, char *buf,
                            size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_SETTINGS_H */
