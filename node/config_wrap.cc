// See config_wrap.h.
#include "config_wrap.h"

#include <string>
#include <vector>

#include "convert.h"
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

// configWrite(path, text, unwrap, changed, hadComments) -> {status, line}
static Napi::Value ConfigWrite(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string file = info[0].As<Napi::String>();
  std::string text = info[1].As<Napi::String>();
  char *line = nullptr;
  int status = mcpp_config_write(file.c_str(), text.data(), text.size(), info[2].ToBoolean() ? 1 : 0,
                                 info[3].As<Napi::Number>().Uint32Value(),
                                 info[4].ToBoolean() ? 1 : 0, &line);
  if (status == MCPP_ERR_NOMEM) throw Napi::Error::New(env, "out of memory");
  Napi::Object r = Napi::Object::New(env);
  r.Set("status", status);
  r.Set("line", TextResult(env, line));
  return r;
}

// ---- Reading a config: csrc/src/app/config_load.c and config_resolve.c ----

static Napi::Value StrOrNull(Napi::Env env, const char *s) {
  if (s == nullptr) return env.Null();
  return Napi::String::New(env, s);
}

static Napi::Array ArrayOf(Napi::Env env, char **items, size_t n) {
  Napi::Array a = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) a.Set(static_cast<uint32_t>(i), Napi::String::New(env, items[i]));
  return a;
}

static Napi::Object ObjectOf(Napi::Env env, char **pairs, size_t n) {
  Napi::Object o = Napi::Object::New(env);
  for (size_t i = 0; i < n; i++) o.Set(pairs[2 * i], Napi::String::New(env, pairs[2 * i + 1]));
  return o;
}

// The fields of one entry, as node/config.js's Server takes them.
static Napi::Object ServerFields(Napi::Env env, const mcpp_config_server &s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", StrOrNull(env, s.name));
  o.Set("transport", StrOrNull(env, s.transport));
  o.Set("jsonPath", StrOrNull(env, s.json_path));
  o.Set("command", StrOrNull(env, s.command));
  o.Set("args", ArrayOf(env, s.args, s.nargs));
  o.Set("env", ObjectOf(env, s.env, s.nenv));
  o.Set("cwd", StrOrNull(env, s.cwd));
  o.Set("url", StrOrNull(env, s.url));
  o.Set("headers", ObjectOf(env, s.headers, s.nheaders));
  o.Set("disabled", Napi::Boolean::New(env, s.disabled != 0));
  return o;
}

// configParse(buffer, requireServers, project|null) -> {servers, jsonPath, problem}
static Napi::Value ConfigParse(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsBuffer())
    throw Napi::TypeError::New(env, "configParse(buffer, requireServers, project)");
  Napi::Buffer<char> buf = info[0].As<Napi::Buffer<char>>();
  std::string project;
  bool has_project = info[2].IsString();
  if (has_project) project = info[2].As<Napi::String>();
  mcpp_config_doc doc;
  if (mcpp_config_parse(buf.Data(), buf.Length(), info[1].ToBoolean() ? 1 : 0,
                        has_project ? project.c_str() : nullptr, &doc) < 0)
    throw Napi::Error::New(env, "out of memory");
  Napi::Array servers = Napi::Array::New(env, doc.nservers);
  for (size_t i = 0; i < doc.nservers; i++)
    servers.Set(static_cast<uint32_t>(i), ServerFields(env, doc.servers[i]));
  Napi::Object result = Napi::Object::New(env);
  result.Set("servers", servers);
  result.Set("jsonPath", StrOrNull(env, doc.json_path));
  result.Set("problem", StrOrNull(env, doc.problem));
  mcpp_config_doc_free(&doc);
  return result;
}

// configSyntaxErrorAt(text) -> code point index, or -1
static Napi::Value ConfigSyntaxErrorAt(const Napi::CallbackInfo &info) {
  std::string text = info[0].As<Napi::String>();
  return Napi::Number::New(info.Env(),
                           static_cast<double>(mcpp_config_syntax_error_at(text.data(), text.size())));
}

// configJsonPath(parent, key: string|number) -> string
static Napi::Value ConfigJsonPath(const Napi::CallbackInfo &info) {
  std::string parent = info[0].As<Napi::String>();
  if (info[1].IsNumber())
    return TextResult(info.Env(), mcpp_config_json_path(parent.c_str(), nullptr, 0,
                                                        info[1].As<Napi::Number>().Uint32Value()));
  std::string key = info[1].ToString();
  return TextResult(info.Env(), mcpp_config_json_path(parent.c_str(), key.data(), key.size(), 0));
}

static Napi::Value ConfigReadProblem(const Napi::CallbackInfo &info) {
  std::string code = info[0].ToString();
  return TextResult(info.Env(), mcpp_config_read_problem(code.c_str()));
}

// An environment object read as the JavaScript copy did: own, defined keys.
struct EnvCtx {
  Napi::Object obj;
  std::string last;
  bool has;
};

static const char *EnvLookup(void *ctx, const char *name) {
  EnvCtx *e = static_cast<EnvCtx *>(ctx);
  if (!e->has || !e->obj.HasOwnProperty(name)) return nullptr;
  Napi::Value v = e->obj.Get(name);
  if (v.IsUndefined()) return nullptr;
  e->last = v.ToString().Utf8Value();
  return e->last.c_str();
}

static void PairsFrom(Napi::Value v, std::vector<std::string> &store) {
  if (!v.IsObject()) return;
  Napi::Object o = v.As<Napi::Object>();
  Napi::Array keys = o.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); i++) {
    Napi::Value k = keys.Get(i);
    store.push_back(k.ToString());
    store.push_back(o.Get(k).ToString());
  }
}

// configFiles(configs, autoPaths) -> [[path, requireServers]...], or why none (string)
static Napi::Value ConfigFiles(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::vector<std::string> given, autos;
  ListFrom(info[0], given);
  ListFrom(info[1], autos);
  std::vector<char *> g = Pointers(given), a = Pointers(autos);
  std::vector<const char *> paths(given.size() + autos.size() + 1);
  std::vector<int> require(paths.size());
  char *problem = nullptr;
  size_t n = mcpp_config_files(g.data(), given.size(), a.data(), autos.size(), paths.data(),
                               require.data(), given.size() + autos.size(), &problem);
  if (problem) return TextResult(env, problem);
  Napi::Array out = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, paths[i]);
    pair.Set(1u, Napi::Boolean::New(env, require[i] != 0));
    out.Set(static_cast<uint32_t>(i), pair);
  }
  return out;
}

// configResolve(fields, workspace, environ, home|null) -> fields filled in, or the problem (string)
static Napi::Value ConfigResolve(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object f = info[0].As<Napi::Object>();
  std::string name = f.Get("name").ToString(), transport = f.Get("transport").ToString(),
              at = f.Get("jsonPath").ToString(), workspace = info[1].ToString(), home, command,
              cwd, url;
  bool has_home = info[3].IsString();
  if (has_home) home = info[3].As<Napi::String>();
  mcpp_config_server in = {};
  in.name = &name[0];
  in.transport = transport.c_str();
  in.json_path = &at[0];
  if (f.Get("command").IsString()) {
    command = f.Get("command").ToString();
    in.command = &command[0];
  }
  if (f.Get("cwd").IsString()) {
    cwd = f.Get("cwd").ToString();
    in.cwd = &cwd[0];
  }
  if (f.Get("url").IsString()) {
    url = f.Get("url").ToString();
    in.url = &url[0];
  }
  std::vector<std::string> args, envs, headers;
  ListFrom(f.Get("args"), args);
  PairsFrom(f.Get("env"), envs);
  PairsFrom(f.Get("headers"), headers);
  std::vector<char *> pa = Pointers(args), pe = Pointers(envs), ph = Pointers(headers);
  in.args = pa.data();
  in.nargs = args.size();
  in.env = pe.data();
  in.nenv = envs.size() / 2;
  in.headers = ph.data();
  in.nheaders = headers.size() / 2;
  EnvCtx ctx{info[2].IsObject() ? info[2].As<Napi::Object>() : Napi::Object::New(env), "", true};
  mcpp_config_server out;
  char *problem = nullptr;
  int rc = mcpp_config_resolve(&in, workspace.c_str(), has_home ? home.c_str() : nullptr,
                               EnvLookup, &ctx, &out, &problem);
  if (rc < 0) throw Napi::Error::New(env, "out of memory");
  if (rc == 1) return TextResult(env, problem);
  Napi::Object result = ServerFields(env, out);
  mcpp_config_server_free(&out);
  return result;
}

// configWorkspace(file) -> string
static Napi::Value ConfigWorkspace(const Napi::CallbackInfo &info) {
  std::string file = info[0].ToString();
  return TextResult(info.Env(), mcpp_config_workspace(file.c_str(), nullptr));
}

// configAutoPaths(cwd|null, home|null, platform|null, environ) -> string[]
static Napi::Value ConfigAutoPaths(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string s[3];
  const char *p[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; i++)
    if (info[i].IsString()) {
      s[i] = info[i].As<Napi::String>();
      p[i] = s[i].c_str();
    }
  EnvCtx ctx{info[3].IsObject() ? info[3].As<Napi::Object>() : Napi::Object::New(env), "", true};
  char *paths[MCPP_CONFIG_AUTO_PATHS] = {};
  if (mcpp_config_auto_paths(p[0], p[1], p[2], EnvLookup, &ctx, paths) < 0)
    throw Napi::Error::New(env, "out of memory");
  Napi::Array a = ArrayOf(env, paths, MCPP_CONFIG_AUTO_PATHS);
  for (char *x : paths) mcpp_config_free(x);
  return a;
}

// configStripJsonc(text) -> text with comments and trailing commas blanked
static Napi::Value ConfigStripJsonc(const Napi::CallbackInfo &info) {
  std::string text = info[0].As<Napi::String>();
  mcpp_config_strip_jsonc(&text[0], text.size());
  return Napi::String::New(info.Env(), text);
}

void InitConfig(Napi::Env env, Napi::Object exports) {
  exports.Set("configRewrite", Napi::Function::New(env, ConfigRewrite, "configRewrite"));
  exports.Set("configFormatFiles", Napi::Function::New(env, ConfigFormatFiles, "configFormatFiles"));
  exports.Set("configFormatStart", Napi::Function::New(env, ConfigFormatStart, "configFormatStart"));
  exports.Set("configFormatResults", Napi::Function::New(env, ConfigFormatResults, "configFormatResults"));
  exports.Set("configFormatRefusal", Napi::Function::New(env, ConfigFormatRefusal, "configFormatRefusal"));
  exports.Set("configWrite", Napi::Function::New(env, ConfigWrite, "configWrite"));
  exports.Set("configStartPath", MCPP_CONFIG_START_PATH);
  exports.Set("configStartTimeoutMs", MCPP_CONFIG_START_TIMEOUT_MS);
  exports.Set("configParse", Napi::Function::New(env, ConfigParse, "configParse"));
  exports.Set("configSyntaxErrorAt", Napi::Function::New(env, ConfigSyntaxErrorAt, "configSyntaxErrorAt"));
  exports.Set("configJsonPath", Napi::Function::New(env, ConfigJsonPath, "configJsonPath"));
  exports.Set("configReadProblem", Napi::Function::New(env, ConfigReadProblem, "configReadProblem"));
  exports.Set("configResolve", Napi::Function::New(env, ConfigResolve, "configResolve"));
  exports.Set("configWorkspace", Napi::Function::New(env, ConfigWorkspace, "configWorkspace"));
  exports.Set("configAutoPaths", Napi::Function::New(env, ConfigAutoPaths, "configAutoPaths"));
  exports.Set("configFiles", Napi::Function::New(env, ConfigFiles, "configFiles"));
  exports.Set("configStripJsonc", Napi::Function::New(env, ConfigStripJsonc, "configStripJsonc"));
}

}  // namespace mcpping_node
