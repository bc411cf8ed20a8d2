/* The environment rule of rules.h (mcpp_env_safe): the names the official
 * SDKs pass to a server they start when not told to pass everything
 * (getDefaultEnvironment, get_default_environment). */
#include <string.h>

#include "mcpping.h"

#ifdef _WIN32
static const char *const safe_names[] = {
    "APPDATA",    "HOMEDRIVE",  "HOMEPATH", "LOCALAPPDATA", "PATH",    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE", "SYSTEMROOT", "TEMP",    "USERNAME",     "USERPROFILE", "PROGRAMFILES"};
#else
static const char *const safe_names[] = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"};
#endif

int mcpp_env_safe(const char *name, const char *value) {
  if (!name || !value) return 0;
  /* An exported bash function: the SDKs skip it (a security risk). */
  if (strncmp(value, "()", 2) == 0) return 0;
  for (size_t i = 0; i < sizeof safe_names / sizeof *safe_names; i++)
    if (strcmp(name, safe_names[i]) == 0) return 1;
  return 0;
}
