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

void InitConfig(Napi::Env env, Napi::Object exports) {
  exports.Set("configRewrite", Napi::Function::New(env, ConfigRewrite, "configRewrite"));
}

}  // namespace mcpping_node
