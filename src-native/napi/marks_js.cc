// The N-API half of screenshot marks (see marks_js.h).
#include "marks_js.h"

#include <cmath>
#include <memory>

#include "../core/marks.h"
#include "../core/png_budget.h"

namespace axsnap {

Napi::Object PixelsToJs(Napi::Env env, CapturedPixels&& pixels) {
  auto* kept = new std::vector<uint8_t>(std::move(pixels.rgba));
  // No copy where external buffers are allowed; the vector goes with the Buffer.
  Napi::Buffer<uint8_t> buf = Napi::Buffer<uint8_t>::NewOrCopy(
      env, kept->data(), kept->size(), [](Napi::Env, uint8_t*, std::vector<uint8_t>* v) { delete v; }, kept);
  Napi::Object o = Napi::Object::New(env);
  o.Set("rgba", buf);
  o.Set("width", pixels.width);
  o.Set("height", pixels.height);
  o.Set("pixelsPerPoint", pixels.pixelsPerPoint);
  Napi::Object origin = Napi::Object::New(env);
  origin.Set("x", pixels.originX);
  origin.Set("y", pixels.originY);
  o.Set("windowOrigin", origin);
  o.Set("captureMs", pixels.captureMs);
  return o;
}

namespace {

class EncodeMarkedWorker : public Napi::AsyncWorker {
 public:
  EncodeMarkedWorker(Napi::Env env, Napi::Buffer<uint8_t> rgba, int width, int height, double pixelsPerPoint,
                     std::vector<Mark> marks, BudgetOptions budget)
      : Napi::AsyncWorker(env, "axsnap.encodeMarked"),
        deferred_(Napi::Promise::Deferred::New(env)),
        // Held so the pixels outlive the job; nothing else writes them (lib/observe/desktop.ts owns the Buffer).
        rgbaRef_(Napi::Persistent(rgba.As<Napi::Object>())),
        rgba_(rgba.Data()),
        width_(width),
        height_(height),
        pixelsPerPoint_(pixelsPerPoint),
        marks_(std::move(marks)),
        budget_(budget) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    Error err =
        EncodeWithinBudget(rgba_, width_, height_, pixelsPerPoint_, budget_, shot_, [this](uint8_t* px, int w, int h) {
          DrawMarks(px, w, h, static_cast<double>(w) / width_, static_cast<double>(h) / height_, marks_, labels_);
        });
    if (err) {
      code_ = ErrorCodeName(err.code);
      SetError(err.message);
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object out = Napi::Object::New(env);
    auto* png = new std::vector<uint8_t>(std::move(shot_.png));
    out.Set("png",
            Napi::Buffer<uint8_t>::NewOrCopy(
                env, png->data(), png->size(), [](Napi::Env, uint8_t*, std::vector<uint8_t>* v) { delete v; }, png));
    out.Set("pixelWidth", shot_.pixelWidth);
    out.Set("pixelHeight", shot_.pixelHeight);
    out.Set("scale", shot_.scale);
    out.Set("encodes", shot_.encodes);
    out.Set("encodeMs", shot_.encodeMs);
    Napi::Array labels = Napi::Array::New(env, labels_.size());
    for (size_t i = 0; i < labels_.size(); ++i) {
      const PlacedLabel& l = labels_[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("index", static_cast<double>(l.index));
      o.Set("x", l.x);
      o.Set("y", l.y);
      o.Set("w", l.w);
      o.Set("h", l.h);
      o.Set("overlaps", l.overlaps);
      labels.Set(static_cast<uint32_t>(i), o);
    }
    out.Set("labels", labels);
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override {
    Napi::Error err = e;
    err.Set("nativeCode", code_.empty() ? "INTERNAL" : code_);
    deferred_.Reject(err.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference rgbaRef_;
  const uint8_t* rgba_;
  int width_, height_;
  double pixelsPerPoint_;
  std::vector<Mark> marks_;
  BudgetOptions budget_;
  Screenshot shot_;
  std::vector<PlacedLabel> labels_;
  std::string code_;
};

Napi::Value Reject(Napi::Env env, const std::string& message) {
  auto d = Napi::Promise::Deferred::New(env);
  Napi::Error e = Napi::TypeError::New(env, "encodeMarked: " + message);
  e.Set("nativeCode", "INVALID_ARGUMENT");
  d.Reject(e.Value());
  return d.Promise();
}

bool IntIn(const Napi::Value& v, double lo, double hi, int& out) {
  if (!v.IsNumber()) return false;
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= lo && d <= hi) || d != std::floor(d)) return false;
  out = static_cast<int>(d);
  return true;
}

}  // namespace

Napi::Value EncodeMarked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // TypeScript built every argument (lib/observe/marks.ts); these checks keep a direct caller from reading out of
  // bounds.
  if (!info[0].IsBuffer()) return Reject(env, "the pixels must be a Buffer");
  Napi::Buffer<uint8_t> rgba = info[0].As<Napi::Buffer<uint8_t>>();
  int width = 0, height = 0;
  if (!IntIn(info[1], 1, 1 << 15, width) || !IntIn(info[2], 1, 1 << 15, height))
    return Reject(env, "width and height must be integers between 1 and 32768");
  if (rgba.Length() != static_cast<size_t>(width) * height * 4)
    return Reject(env, "the pixels must be width*height*4 bytes");
  double ppp = info[3].IsNumber() ? info[3].As<Napi::Number>().DoubleValue() : 1;
  if (!(ppp > 0) || !std::isfinite(ppp)) ppp = 1;
  if (!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    return Reject(env, "marks must be a Float64Array of [index, x, y, w, h] groups");
  Napi::Float64Array flat = info[4].As<Napi::Float64Array>();
  if (flat.ElementLength() % 5 != 0) return Reject(env, "marks must be a Float64Array of [index, x, y, w, h] groups");
  std::vector<Mark> marks(flat.ElementLength() / 5);
  for (size_t i = 0; i < marks.size(); ++i) {
    const double index = flat[i * 5];
    marks[i].index = index >= 0 && index <= 9007199254740991.0 ? static_cast<int64_t>(index) : -1;
    marks[i].x = flat[i * 5 + 1];
    marks[i].y = flat[i * 5 + 2];
    marks[i].w = flat[i * 5 + 3];
    marks[i].h = flat[i * 5 + 4];
  }
  BudgetOptions budget;
  if (info[5].IsObject()) {  // tests: a smaller budget
    Napi::Object b = info[5].As<Napi::Object>();
    int side = 0;
    if (IntIn(b.Get("maxSide"), 1, 1 << 15, side)) budget.maxSide = side;
    Napi::Value bytes = b.Get("maxBytes");
    if (bytes.IsNumber() && bytes.As<Napi::Number>().DoubleValue() >= 1)
      budget.maxBytes = static_cast<size_t>(std::min(bytes.As<Napi::Number>().DoubleValue(), 1e12));
    Napi::Value minScale = b.Get("minScale");
    if (minScale.IsNumber()) budget.minScale = minScale.As<Napi::Number>().DoubleValue();
  }
  auto* worker = new EncodeMarkedWorker(env, rgba, width, height, ppp, std::move(marks), budget);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace axsnap
