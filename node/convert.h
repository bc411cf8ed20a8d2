// Conversions between JavaScript values and the mcpping C structs.
#ifndef MCPPING_NODE_CONVERT_H
#define MCPPING_NODE_CONVERT_H

#include <napi.h>

#include <string>
#include <vector>

#include "mcpping.h"

namespace mcpping_node {

// Settings plus the storage their string fields point into.
struct OwnedSettings {
  mcpp_settings s;
  std::string peer_name;
  std::string probe_method;
};

// Fills *out from a plain object ({role, transport, intervalMs, ...});
// missing keys keep mcpp_settings_default's values. Throws a TypeError for
// unknown enum strings. Also sets a random nonce and the clock offset.
void SettingsFromJs(const Napi::Object &obj, OwnedSettings *out);

// Spawn options and the storage their pointers refer to.
struct OwnedSpawn {
  mcpp_spawn_options o;
  std::string file;
  std::string cwd;
  std::vector<std::string> args_s, env_s;
  std::vector<char *> args, env;
};

// Fills *out from {file, args: [argv0, ...], env: ["K=V"] | null, cwd,
// stderr: "inherit"|"pipe"|"ignore", killGraceMs}.
void SpawnFromJs(const Napi::Object &obj, OwnedSpawn *out);

// An engine event as a plain object; `token` is the runtime's ping token
// (0 when not a runtime event).
Napi::Object EventToJs(Napi::Env env, const mcpp_event &ev, uint64_t token);

// Engine info as a plain object.
Napi::Object InfoToJs(Napi::Env env, const mcpp_engine_info &info);

// A JavaScript Error for an MCPP_ERR_* code: message from mcpp_strerror
// (or `detail`), `code` the symbolic name, `errno` the number.
Napi::Error McppErrorOf(Napi::Env env, int err, const std::string &detail);

// Throws McppErrorOf(env, err, detail).
[[noreturn]] void ThrowMcppError(Napi::Env env, int err,
                                 const std::string &detail = std::string());

// Monotonic microseconds, the clock the runtime's driver uses (uv_hrtime).
uint64_t MonotonicUs();

// Unix time minus monotonic time, in microseconds.
int64_t ClockOffsetUs();

// 64 random bits for ping ids and jitter.
uint64_t RandomNonce();

// Each element of a JavaScript array as a string, appended to store
// (nothing for a non-array).
void ListFrom(Napi::Value v, std::vector<std::string> &store);

// Pointers into store's strings, then NULL: a C list of them (argv-style).
std::vector<char *> Pointers(std::vector<std::string> &store);

}  // namespace mcpping_node

#endif
