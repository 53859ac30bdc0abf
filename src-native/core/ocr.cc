// The engine-independent half of OCR (ocr.h): the points <-> pixels mapping
// of a capture, blanking, the noise filter, and recognizeText's capture step.
#include "ocr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "backend.h"

namespace axsnap {
namespace {

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool Blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

std::string Trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) b++;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) e--;
  return s.substr(b, e - b);
}

}  // namespace

PixelRect ToPixels(const OcrImage& image, const Rect& points) {
  const double s = image.pixelsPerPoint > 0 ? image.pixelsPerPoint : 1;
  const double x0 = std::floor((points.x - image.originX) * s), y0 = std::floor((points.y - image.originY) * s);
  const double x1 = std::ceil((points.x + points.w - image.originX) * s);
  const double y1 = std::ceil((points.y + points.h - image.originY) * s);
  PixelRect r;
  if (!(x1 > x0 && y1 > y0)) return r;  // NaN or empty
  const int l = static_cast<int>(std::max(0.0, std::min(x0, static_cast<double>(image.width))));
  const int t = static_cast<int>(std::max(0.0, std::min(y0, static_cast<double>(image.height))));
  const int rr = static_cast<int>(std::max(0.0, std::min(x1, static_cast<double>(image.width))));
  const int b = static_cast<int>(std::max(0.0, std::min(y1, static_cast<double>(image.height))));
  r.x = l;
  r.y = t;
  r.w = rr - l;
  r.h = b - t;
  return r;
}

Rect ToPoints(const OcrImage& image, const PixelRect& pixels) {
  const double s = image.pixelsPerPoint > 0 ? image.pixelsPerPoint : 1;
  return {image.originX + pixels.x / s, image.originY + pixels.y / s, pixels.w / s, pixels.h / s};
}

void BlankRects(uint8_t* rgba, int width, int height, int stride, const std::vector<PixelRect>& rects) {
  for (const PixelRect& r : rects) {
    if (r.Empty()) continue;
    // The ring just outside the rectangle (inside the image): its most common colour.
    std::unordered_map<uint32_t, int> counts;
    auto sample = [&](int x, int y) {
      if (x < 0 || y < 0 || x >= width || y >= height) return;
      uint32_t c;
      std::memcpy(&c, rgba + static_cast<size_t>(y) * stride + static_cast<size_t>(x) * 4, 4);
      counts[c]++;
    };
    for (int x = r.x - 1; x <= r.x + r.w; x++) {
      sample(x, r.y - 1);
      sample(x, r.y + r.h);
    }
    for (int y = r.y; y < r.y + r.h; y++) {
      sample(r.x - 1, y);
      sample(r.x + r.w, y);
    }
    uint32_t fill = 0xffffffffu;  // white when the rectangle is the whole image
    int best = 0;
    for (const auto& [c, n] : counts)
      if (n > best || (n == best && c < fill)) {
        best = n;
        fill = c;
      }
    for (int y = r.y; y < r.y + r.h; y++) {
      uint8_t* row = rgba + static_cast<size_t>(y) * stride + static_cast<size_t>(r.x) * 4;
      for (int x = 0; x < r.w; x++) std::memcpy(row + static_cast<size_t>(x) * 4, &fill, 4);
    }
  }
}

std::string InkOf(const OcrImage& image, const PixelRect& box) {
  if (box.Empty() || !image.rgba) return "";
  auto lum = [&image](int x, int y) {
    const uint8_t* p = image.rgba + static_cast<size_t>(y) * image.stride + static_cast<size_t>(x) * 4;
    return (p[0] * 299 + p[1] * 587 + p[2] * 114) / 1000;
  };
  // The background: the most common of 16 luminance bands, as the mean of its pixels.
  int bands[16] = {0};
  int64_t sums[16] = {0};
  for (int y = box.y; y < box.y + box.h; y++)
    for (int x = box.x; x < box.x + box.w; x++) {
      const int l = lum(x, y);
      bands[l / 16]++;
      sums[l / 16] += l;
    }
  const int mode = static_cast<int>(std::max_element(bands, bands + 16) - bands);
  const int background = static_cast<int>(sums[mode] / std::max(1, bands[mode]));
  constexpr int kInkContrast = 48;
  const int cw = std::max(2, (box.w + 255) / 256), ch = std::max(2, (box.h + 31) / 32);
  const int cols = (box.w + cw - 1) / cw, rows = (box.h + ch - 1) / ch;
  std::vector<uint8_t> bits((static_cast<size_t>(cols) * rows + 7) / 8, 0);
  for (int y = box.y; y < box.y + box.h; y++)
    for (int x = box.x; x < box.x + box.w; x++) {
      if (std::abs(lum(x, y) - background) < kInkContrast) continue;
      const size_t cell = static_cast<size_t>((y - box.y) / ch) * cols + (x - box.x) / cw;
      bits[cell / 8] |= static_cast<uint8_t>(1u << (cell % 8));
    }
  static const char kHex[] = "0123456789abcdef";
  std::string out = std::to_string(cols) + "x" + std::to_string(rows) + ":";
  for (uint8_t b : bits) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

namespace {

// `image` with `options.blanks` painted out, in `copy` when there are any.
OcrImage Blanked(const OcrImage& image, const OcrOptions& options, std::vector<uint8_t>& copy) {
  OcrImage view = image;
  if (options.blanks.empty()) return view;
  // The caller's pixels stay as they were: a snapshot's screenshot shows what is there.
  copy.assign(image.rgba, image.rgba + static_cast<size_t>(image.stride) * image.height);
  std::vector<PixelRect> blanks;
  for (const Rect& b : options.blanks) blanks.push_back(ToPixels(image, b));
  BlankRects(copy.data(), image.width, image.height, image.stride, blanks);
  view.rgba = copy.data();
  return view;
}

bool EmptyCapture(const OcrImage& image) {
  return !image.rgba || image.width <= 0 || image.height <= 0 || image.stride < image.width * 4;
}

}  // namespace

Error InkRegions(const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  const Clock::time_point t0 = Clock::now();
  if (EmptyCapture(image)) return {ErrorCode::kCaptureFailed, "the capture is empty"};
  std::vector<uint8_t> copy;
  const OcrImage view = Blanked(image, options, copy);
  out.lines.clear();
  // Each region asked, in order, off-capture ones included (an empty ink): the caller pairs them up.
  for (const Rect& r : options.regions) {
    const PixelRect p = ToPixels(image, r);
    out.lines.push_back({"", ToPoints(image, p), 1, InkOf(view, p), {}});
  }
  out.engine = "ink";
  out.ocrMs = MsSince(t0);
  return {};
}

Error RecognizeImage(OcrEngine& engine, const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  const Clock::time_point t0 = Clock::now();
  if (EmptyCapture(image)) return {ErrorCode::kCaptureFailed, "the capture is empty"};
  std::vector<uint8_t> copy;
  const OcrImage view = Blanked(image, options, copy);
  OcrPixelRequest request;
  request.languages = OcrLanguages(options.languages);
  request.singleLine = options.singleLine;
  request.pixelsPerPoint = image.pixelsPerPoint;
  request.deadline = options.deadline;
  if (options.regions.empty()) {
    request.regions.push_back({0, 0, image.width, image.height});
  } else {
    for (const Rect& r : options.regions) {
      PixelRect p = ToPixels(image, r);
      if (!p.Empty()) request.regions.push_back(p);  // a region off the capture reads nothing
    }
  }
  out.lines.clear();
  std::vector<OcrPixelLine> lines;
  if (!request.regions.empty())
    if (Error err = engine.Recognize(view, request, lines)) return err;
  out.engine = engine.Name();
  for (OcrPixelLine& l : lines) {
    std::string text = Trimmed(l.text);
    if (text.empty() || Blank(text) || l.confidence < kOcrMinConfidence) continue;
    out.lines.push_back({std::move(text), ToPoints(image, l.box), std::min(1.0, std::max(0.0, l.confidence)),
                         InkOf(view, l.box), std::move(l.words)});
  }
  out.ocrMs = MsSince(t0);
  return {};
}

std::vector<std::string> OcrLanguages(const std::vector<std::string>& asked) {
  return asked.empty() ? std::vector<std::string>{"eng"} : asked;
}

Error RecognizeWindowText(Backend& backend, const WindowInfo& window, const OcrOptions& options, OcrResult& out) {
  // No engine, or no data for a language: said before anything is captured. Ink needs none.
  if (!options.inkOnly)
    if (Error err = backend.OcrReady(OcrLanguages(options.languages))) return err;
  const Clock::time_point c0 = Clock::now();
  std::vector<uint8_t> rgba;
  int width = 0, height = 0;
  Rect captured;
  if (Error err = backend.Capture(window, rgba, width, height, captured, options.deadline)) return err;
  out.captureMs = MsSince(c0);
  OcrImage image;
  image.rgba = rgba.data();
  image.width = width;
  image.height = height;
  image.stride = width * 4;
  // What the capture itself says; the backend's scale when it cannot (a zero-size frame).
  const double scale = backend.Scale(window);
  image.pixelsPerPoint = captured.w > 0 ? width / captured.w : (scale > 0 && std::isfinite(scale) ? scale : 1);
  image.originX = window.hasFrame ? captured.x - window.frame.x : 0;
  image.originY = window.hasFrame ? captured.y - window.frame.y : 0;
  if (Clock::now() >= options.deadline) return {ErrorCode::kTimeout, "the deadline passed before recognition"};
  if (options.inkOnly) return InkRegions(image, options, out);
  return backend.RecognizeText(window, image, options, out);
}

}  // namespace axsnap
