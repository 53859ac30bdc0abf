// Conversions between the core's C++ types and JavaScript values. Runs on the
// JavaScript thread only. The JavaScript shapes are those of lib/model/model.ts and
// lib/native.ts; TypeScript validated every argument before it got here.
#pragma once

#include <napi.h>

#include "../core/snapshot.h"
#include "../fake/fake_backend.h"

namespace axsnap {

Napi::Object NodeToJs(Napi::Env env, const RawNode& node);
Napi::Object SnapshotToJs(Napi::Env env, const SnapshotResult& result);
Napi::Object AppToJs(Napi::Env env, const AppInfo& app);
Napi::Object WindowToJs(Napi::Env env, const WindowInfo& window);
Napi::Object RectToJs(Napi::Env env, const Rect& r);

WindowInfo WindowFromJs(const Napi::Object& o);
// recognizeText's request (regions, blanks, languages, singleLine); the deadline is the caller's.
OcrOptions OcrOptionsFromJs(const Napi::Object& o);
Napi::Object OcrResultToJs(Napi::Env env, const OcrResult& result);
NodeAttributes AttributesFromJs(const Napi::Object& o);
// Throws a JavaScript TypeError (via Napi::Error) on a malformed script.
FakeScript FakeScriptFromJs(const Napi::Object& script);

}  // namespace axsnap
