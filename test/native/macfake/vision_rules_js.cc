// Test-only entry points of axsnap_macfake for the Vision request settings that
// need no Objective-C (src-native/mac/vision_rules.h): the engine that uses
// them runs only on a Mac, the rules run here.
//
//   visionMinimumTextHeight(regionHeightPx, pixelsPerPoint) -> number
//   visionLanguages(codes, supported | null)                 -> { code, message, hint, languages }
#include <napi.h>

#include <string>
#include <vector>

#include "../../../src-native/mac/vision_rules.h"

namespace axsnap {
namespace {

std::vector<std::string> StringsOf(const Napi::Value& v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).ToString().Utf8Value());
  return out;
}

}  // namespace

void RegisterVisionRules(Napi::Env env, Napi::Object exports) {
  exports.Set("visionMinimumTextHeight", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const int height = info[0].As<Napi::Number>().Int32Value();
                const double scale = info[1].As<Napi::Number>().DoubleValue();
                return Napi::Number::New(info.Env(), VisionMinimumTextHeight(height, scale));
              }));
  exports.Set("visionLanguages", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const std::vector<std::string> codes = StringsOf(info[0]);
                const std::vector<std::string> supported = StringsOf(info[1]);
                std::vector<std::string> languages;
                const Error err = VisionLanguagesFor(codes, info[1].IsArray() ? &supported : nullptr, languages);
                Napi::Object o = Napi::Object::New(info.Env());
                o.Set("code", ErrorCodeName(err.code));
                o.Set("message", err.message);
                o.Set("hint", err.hint);
                Napi::Array list = Napi::Array::New(info.Env(), languages.size());
                for (size_t i = 0; i < languages.size(); i++) list.Set(static_cast<uint32_t>(i), languages[i]);
                o.Set("languages", list);
                return o;
              }));
}

}  // namespace axsnap
