// See config_wrap.h.
#include "config_wrap.h"

#include <string>
#include <vector>

#include "mcpping.h"

namespace mcpping_node {

static Napi::Value ConfigRewrite(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[2].IsArray())
    throw Napi::TypeError::New(env, "configRewrite(text, unwrap, launcher)");
  std::string text = info[0].As<Napi::String>();
  bool unwrap = info[1].ToBoolean();
  Napi::Array arr = info[2].As<Napi::Array>();
  std::vector<std::string> words;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value v = arr.Get(i);
    if (!v.IsString()) throw Napi::TypeError::New(env, "launcher must hold strings");
    words.push_back(v.As<Napi::String>());
  }
  std::vector<const char *> launcher;
  for (const std::string &w : words) launcher.push_back(w.c_str());
  char *out = nullptr;
  size_t out_len = 0;
  int changed = 0, comments = 0;
  int rc = mcpp_config_rewrite(text.data(), text.size(), unwrap ? 1 : 0, launcher.data(),
                               launcher.size(), &out, &out_len, &changed, &comments);
  if (rc < 0)
    throw Napi::Error::New(env, rc == MCPP_ERR_NOMEM
                                    ? "out of memory"
                                    : "not a JSON object, or no launcher to wrap with");
  Napi::Object result = Napi::Object::New(env);
  result.Set("text", Napi::String::New(env, out, out_len));
  mcpp_config_free(out);
  result.Set("changed", Napi::Number::New(env, changed));
  result.Set("hadComments", Napi::Boolean::New(env, comments != 0));
  return result;
}

static Napi::Value TextResult(Napi::Env env, char *out) {
  if (out == nullptr) throw Napi::Error::New(env, "out of memory");
  Napi::String s = Napi::String::New(env, out);
  mcpp_config_free(out);
  return s;
}

// configFormatFiles([[path, servers]...], json) -> string
static Napi::Value ConfigFormatFiles(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Array arr = info[0].As<Napi::Array>();
  std::vector<std::string> paths;
  std::vector<size_t> counts;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Array pair = arr.Get(i).As<Napi::Array>();
    paths.push_back(pair.Get(0u).As<Napi::String>());
    counts.push_back(static_cast<size_t>(pair.Get(1u).As<Napi::Number>().Int64Value()));
  }
  std::vector<const char *> files;
  for (const std::string &p : paths) files.push_back(p.c_str());
  return TextResult(env, mcpp_config_format_files(files.data(), counts.data(), files.size(),
                                                   info[1].ToBoolean() ? 1 : 0));
}

// configFormatStart(servers, count, intervalS, timeoutS, deadlineS, json) -> string
static Napi::Value ConfigFormatStart(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  return TextResult(env, mcpp_config_format_start(
                             static_cast<size_t>(info[0].As<Napi::Number>().Int64Value()),
                             info[1].As<Napi::Number>().Int32Value(),
                             info[2].As<Napi::Number>().DoubleValue(),
                             info[3].As<Napi::Number>().DoubleValue(),
                             info[4].As<Napi::Number>().DoubleValue(), info[5].ToBoolean() ? 1 : 0));
}

// One JS row's strings and RTTs, kept alive while C reads the row.
struct RowStore {
  std::string strs[8];
  bool present[8] = {};
  std::vector<double> rtts;
};

static void RowFromJs(Napi::Object o, RowStore &st, mcpp_config_row &r) {
  static const char *const keys[8] = {"name",   "transport",  "protocolVersion", "status",
                                      "reason", "lastStderr", "file",            "jsonPath"};
  const char **fields[8] = {&r.name,   &r.transport,   &r.protocol_version, &r.status,
                            &r.reason, &r.last_stderr, &r.file,             &r.json_path};
  for (int k = 0; k < 8; k++) {
    Napi::Value v = o.Get(keys[k]);
    st.present[k] = v.IsString();
    if (v.IsString()) st.strs[k] = v.As<Napi::String>();
    *fields[k] = st.present[k] ? st.strs[k].c_str() : nullptr;
  }
  Napi::Value list = o.Get("rttsMs");
  if (list.IsArray()) {
    Napi::Array a = list.As<Napi::Array>();
    for (uint32_t j = 0; j < a.Length(); j++) st.rtts.push_back(a.Get(j).As<Napi::Number>().DoubleValue());
  }
  r.sent = o.Get("sent").ToNumber().Int32Value();
  r.received = o.Get("received").ToNumber().Int32Value();
  Napi::Value noise = o.Get("nonJsonLines");
  r.non_json_lines = noise.IsNumber() ? static_cast<unsigned long>(noise.As<Napi::Number>().Int64Value()) : 0;
  r.rtts_ms = st.rtts.data();
  r.n_rtts = st.rtts.size();
}

// configFormatResults(rows, timeMs, json, quiet) -> {text, status}
static Napi::Value ConfigFormatResults(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Array arr = info[0].As<Napi::Array>();
  size_t n = arr.Length();
  std::vector<RowStore> store(n);
  std::vector<mcpp_config_row> rows(n);
  for (size_t i = 0; i < n; i++)
    RowFromJs(arr.Get(static_cast<uint32_t>(i)).As<Napi::Object>(), store[i], rows[i]);
  int status = 0;
  char *out = mcpp_config_format_results(rows.data(), n, info[1].As<Napi::Number>().DoubleValue(),
                                         info[2].ToBoolean() ? 1 : 0, info[3].ToBoolean() ? 1 : 0,
                                         &status);
  Napi::Object result = Napi::Object::New(env);
  result.Set("text", TextResult(env, out));
  result.Set("status", Napi::Number::New(env, status));
  return result;
}

// configFormatRefusal(file, row) -> string
static Napi::Value ConfigFormatRefusal(const Napi::CallbackInfo &info) {
  std::string file = info[0].As<Napi::String>();
  RowStore st;
  mcpp_config_row row = {};
  RowFromJs(info[1].As<Napi::Object>(), st, row);
  return TextResult(info.Env(), mcpp_config_format_refusal(file.c_str(), &row));
}

void InitConfig(Napi::Env env, Napi::Object exports) {
  exports.Set("configRewrite", Napi::Function::New(env, ConfigRewrite, "configRewrite"));
  exports.Set("configFormatFiles", Napi::Function::New(env, ConfigFormatFiles, "configFormatFiles"));
  exports.Set("configFormatStart", Napi::Function::New(env, ConfigFormatStart, "configFormatStart"));
  exports.Set("configFormatResults", Napi::Function::New(env, ConfigFormatResults, "configFormatResults"));
  exports.Set("configFormatRefusal", Napi::Function::New(env, ConfigFormatRefusal, "configFormatRefusal"));
}

}  // namespace mcpping_node
