// The N-API half of screenshot marks (core/marks.h): a snapshot taken with
// keepPixels hands its capture to JavaScript unencoded; encodeMarked draws the
// printed elements' marks on it and encodes it within the size budget, on the
// libuv thread pool (not the backend's worker: no desktop is touched).
#pragma once

#include <napi.h>

#include "../core/snapshot.h"

namespace axsnap {

// { rgba: Buffer, width, height, pixelsPerPoint, windowOrigin: {x, y}, captureMs }; takes the pixels.
Napi::Object PixelsToJs(Napi::Env env, CapturedPixels&& pixels);
// encodeMarked(rgba, width, height, pixelsPerPoint, marks: Float64Array of [index, x, y, w, h]...,
//              budget?: { maxSide?, maxBytes?, minScale? }) -> Promise<{ png, pixelWidth, pixelHeight,
//              scale, encodes, encodeMs, labels: [{ index, x, y, w, h, overlaps }] }>
Napi::Value EncodeMarked(const Napi::CallbackInfo& info);

}  // namespace axsnap
