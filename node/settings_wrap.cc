// See settings_wrap.h. Times are in ms (Node's unit) unless a call passes
// inSeconds (the command line's seconds).
#include "settings_wrap.h"

#include <cmath>
#include <string>

#include "mcpping.h"

namespace mcpping_node {

namespace {

const mcpp_setting_info *Find(Napi::Env env, const Napi::Value &name) {
  // A setting, or a call argument that is none (mcpp_arguments_table).
  std::string text = name.IsString() ? name.As<Napi::String>().Utf8Value() : std::string();
  const mcpp_setting_info *info = mcpp_setting_find(text.c_str());
  if (info == nullptr) info = mcpp_argument_find(text.c_str());
  if (info == nullptr) throw Napi::TypeError::New(env, "no such setting");
  return info;
}

Napi::Value OrNull(Napi::Env env, const char *s) {
  return s ? Napi::Value(Napi::String::New(env, s)) : env.Null();
}

double Low(const Napi::CallbackInfo &info, size_t i) {
  return info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue()
                                                 : NAN;
}

Napi::Array Rows(Napi::Env env, const mcpp_setting_info *t, size_t n) {
  static const char *const units[] = {"ms",    "count", "percent", "bytes",
                                      "ratio", "flag",  "choice",  "text"};
  Napi::Array out = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", t[i].name);
    o.Set("unit", units[t[i].unit]);
    o.Set("default", t[i].def);
    o.Set("policy", t[i].policy);
    o.Set("min", t[i].min);
    o.Set("max", t[i].max);
    o.Set("zero", OrNull(env, t[i].zero));
    o.Set("floor", OrNull(env, t[i].floor));
    o.Set("choices", OrNull(env, t[i].choices));
    o.Set("meaning", t[i].meaning);
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

// settingsTable(): every row, times in ms.
Napi::Value SettingsTable(const Napi::CallbackInfo &info) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_settings_table(&n);
  return Rows(info.Env(), t, n);
}

// argumentsTable(): the call arguments that are no setting, as rows.
Napi::Value ArgumentsTable(const Napi::CallbackInfo &info) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_arguments_table(&n);
  return Rows(info.Env(), t, n);
}

// settingRange(name, inSeconds, low?, lowName?): what the setting allows.
Napi::Value SettingRange(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const mcpp_setting_info *s = Find(env, info[0]);
  int unit = info[1].ToBoolean() ? MCPP_IN_SECONDS : MCPP_IN_MS;
  std::string low_name = info.Length() > 3 && info[3].IsString()
                             ? info[3].As<Napi::String>().Utf8Value()
                             : std::string();
  char buf[256];
  return Napi::String::New(
      env, mcpp_setting_range(s, unit, Low(info, 2),
                              low_name.empty() ? nullptr : low_name.c_str(), buf,
                              sizeof buf));
}

// settingCheck(name, shown, value, inSeconds, low?, lowName?): the value in
// C's unit (whole ms for times), or a RangeError with C's sentence.
Napi::Value SettingCheck(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const mcpp_setting_info *s = Find(env, info[0]);
  std::string shown = info[1].ToString().Utf8Value();
  double value = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : NAN;
  int unit = info[3].ToBoolean() ? MCPP_IN_SECONDS : MCPP_IN_MS;
  std::string low_name = info.Length() > 5 && info[5].IsString()
                             ? info[5].As<Napi::String>().Utf8Value()
                             : std::string();
  char buf[256];
  double out = 0;
  if (mcpp_setting_check(s, shown.c_str(), value, unit, Low(info, 4),
                         low_name.empty() ? nullptr : low_name.c_str(), &out, buf,
                         sizeof buf) != 0) {
    Napi::Error e = Napi::RangeError::New(env, buf);
    e.Set("code", "ERR_MCPPING_INVALID_ARG");
    throw e;
  }
  return Napi::Number::New(env, out);
}

// settingCheckText(name, shown, value): undefined, or a RangeError with C's
// sentence (probe_method: a method name).
Napi::Value SettingCheckText(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const mcpp_setting_info *s = Find(env, info[0]);
  std::string shown = info[1].ToString().Utf8Value();
  std::string value = info[2].ToString().Utf8Value();
  char buf[256];
  if (mcpp_setting_check_text(s, shown.c_str(), value.data(), value.size(), buf,
                              sizeof buf) != 0) {
    Napi::Error e = Napi::RangeError::New(env, buf);
    e.Set("code", "ERR_MCPPING_INVALID_ARG");
    throw e;
  }
  return env.Undefined();
}

// staleBoundMs(intervalMs, timeoutMs, failures): interval + timeout x
// failures, capped at the longest timer (0: the default).
Napi::Value StaleBoundMs(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t v[3];
  for (int i = 0; i < 3; i++) {
    if (!info[i].IsNumber()) throw Napi::TypeError::New(env, "staleBoundMs takes three numbers");
    v[i] = info[i].As<Napi::Number>().Uint32Value();
  }
  return Napi::Number::New(env, mcpp_stale_bound_ms(v[0], v[1], v[2]));
}

}  // namespace

void InitSettings(Napi::Env env, Napi::Object exports) {
  exports.Set("settingsTable", Napi::Function::New(env, SettingsTable, "settingsTable"));
  exports.Set("argumentsTable", Napi::Function::New(env, ArgumentsTable, "argumentsTable"));
  exports.Set("staleBoundMs", Napi::Function::New(env, StaleBoundMs, "staleBoundMs"));
  exports.Set("settingRange", Napi::Function::New(env, SettingRange, "settingRange"));
  exports.Set("settingCheck", Napi::Function::New(env, SettingCheck, "settingCheck"));
  exports.Set("settingCheckText", Napi::Function::New(env, SettingCheckText, "settingCheckText"));
  // Every MCPP_ERR_* code by name, from the one list (MCPP_ERRNO_MAP).
  Napi::Object codes = Napi::Object::New(env);
#define XX(name, code, text) codes.Set("MCPP_ERR_" #name, Napi::Number::New(env, code));
  MCPP_ERRNO_MAP(XX)
#undef XX
  exports.Set("errorCodes", codes);
  // What the engine's write callback is handed (mcpp_frame_kind).
  Napi::Object kinds = Napi::Object::New(env);
  kinds.Set("ping", Napi::Number::New(env, MCPP_FRAME_PING));
  kinds.Set("pong", Napi::Number::New(env, MCPP_FRAME_PONG));
  kinds.Set("cancel", Napi::Number::New(env, MCPP_FRAME_CANCEL));
  kinds.Set("probe", Napi::Number::New(env, MCPP_FRAME_PROBE));
  exports.Set("frameKinds", kinds);
}

}  // namespace mcpping_node
