// Tesseract 5 as an OcrEngine (ocr_tesseract.h), through the C API of
// tesseract/capi.h, every function found with dlsym in libtesseract.so.5.
// The declarations below are ours: the opaque handle types and the enum
// values of publictypes.h, which are Tesseract's stable ABI. Documentation:
// https://tesseract-ocr.github.io/tessapi/5.x/ (capi.h, publictypes.h,
// ocrclass.h for the monitor's deadline) and tessdoc's ImproveQuality page
// (page segmentation modes, resolution).
//
// Choices, by measurement on the 2-core test machine (notes in the PR):
// - OMP_THREAD_LIMIT=1 before the library loads (unless the user set it):
//   Debian's build runs the LSTM under OpenMP with an explicit num_threads,
//   which only the thread limit caps, and libgomp reads that once, at load.
//   With more threads than cores recognition took 3-8x longer.
// - LSTM only (OEM 1), page segmentation "sparse text" (PSM 11): one line per
//   UI label, where PSM 3 joins unrelated widgets across a window into one line.
// - A line read with low confidence, or tiny, is read again alone,
//   upscaled, as a single line (PSM 7); the better reading is kept. The same
//   single-line read serves the identity re-check (singleLine). The line read
//   again spans its words, not only Tesseract's line box (see Lines).
// - One TessBaseAPI per language set, initialised on first use and kept:
//   init costs 60-130 ms for eng and up to a second for chi_sim.
#include "ocr_tesseract.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace axsnap {
namespace {

extern "C" {
struct TessBaseAPI;
struct TessResultIterator;
struct TessPageIterator;
struct ETEXT_DESC;
}

// publictypes.h
constexpr int kRilTextline = 2;
constexpr int kRilWord = 3;
constexpr int kRilSymbol = 4;
constexpr int kOemLstmOnly = 1;
constexpr int kPsmSingleLine = 7;
constexpr int kPsmSparseText = 11;
// leptonica's environ.h: L_SEVERITY_NONE
constexpr int kLeptSeverityNone = 6;

// Tesseract takes at most this many pixels a side (INT16_MAX).
constexpr int kMaxSide = 32767;

// The library name, overridable for tests only: AXSNAP_TESSERACT_LIB=/nonexistent makes Tesseract
// "not installed" for one process (test/linux/ocr-engine.test.ts). Not a user setting.
const char* LibraryName() {
  const char* v = std::getenv("AXSNAP_TESSERACT_LIB");
  return v && *v ? v : "libtesseract.so.5";
}

constexpr const char* kInstallHint =
    "install Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (tesseract-ocr-chi-sim for Chinese)";

struct DlClose {
  void operator()(void* h) const {
    if (h) dlclose(h);
  }
};
using DlHandle = std::unique_ptr<void, DlClose>;

// Every function the engine calls, found once.
struct TessApi {
  const char* (*Version)();
  TessBaseAPI* (*Create)();
  void (*Delete)(TessBaseAPI*);
  void (*End)(TessBaseAPI*);
  int (*Init2)(TessBaseAPI*, const char*, const char*, int);
  int (*SetVariable)(TessBaseAPI*, const char*, const char*);
  void (*SetPageSegMode)(TessBaseAPI*, int);
  void (*SetImage)(TessBaseAPI*, const unsigned char*, int, int, int, int);
  void (*SetSourceResolution)(TessBaseAPI*, int);
  void (*SetRectangle)(TessBaseAPI*, int, int, int, int);
  int (*Recognize)(TessBaseAPI*, ETEXT_DESC*);
  void (*Clear)(TessBaseAPI*);
  TessResultIterator* (*GetIterator)(TessBaseAPI*);
  TessPageIterator* (*GetPageIterator)(TessResultIterator*);
  int (*BoundingBox)(const TessPageIterator*, int, int*, int*, int*, int*);
  char* (*GetUTF8Text)(const TessResultIterator*, int);
  float (*Confidence)(const TessResultIterator*, int);
  int (*Next)(TessResultIterator*, int);
  int (*IsAtBeginningOf)(const TessPageIterator*, int);
  void (*IteratorDelete)(TessResultIterator*);
  void (*DeleteText)(const char*);
  ETEXT_DESC* (*MonitorCreate)();
  void (*MonitorDelete)(ETEXT_DESC*);
  void (*MonitorSetDeadlineMSecs)(ETEXT_DESC*, int);
};

template <typename F>
bool Find(void* lib, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && missing.empty()) missing = name;
  return out != nullptr;
}

// The loaded library. RTLD_NODELETE: closing the handle never unmaps libtesseract (nor the libgomp it
// brought), whose OpenMP threads, when a user's OMP_THREAD_LIMIT allows them, outlive any one engine.
class TessLibrary {
 public:
  static Error Load(std::unique_ptr<TessLibrary>& out) {
    // Before libgomp loads, or the cap does nothing (see the top of this file).
    if (!std::getenv("OMP_THREAD_LIMIT")) setenv("OMP_THREAD_LIMIT", "1", 0);
    const char* name = LibraryName();
    DlHandle lib(dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
    if (!lib) {
      const char* why = dlerror();
      return {ErrorCode::kOcrUnavailable, std::string("Tesseract is not installed (") + (why ? why : name) + ")",
              kInstallHint};
    }
    auto l = std::unique_ptr<TessLibrary>(new TessLibrary());
    TessApi& a = l->api_;
    std::string missing;
    void* h = lib.get();
    Find(h, "TessVersion", a.Version, missing);
    Find(h, "TessBaseAPICreate", a.Create, missing);
    Find(h, "TessBaseAPIDelete", a.Delete, missing);
    Find(h, "TessBaseAPIEnd", a.End, missing);
    Find(h, "TessBaseAPIInit2", a.Init2, missing);
    Find(h, "TessBaseAPISetVariable", a.SetVariable, missing);
    Find(h, "TessBaseAPISetPageSegMode", a.SetPageSegMode, missing);
    Find(h, "TessBaseAPISetImage", a.SetImage, missing);
    Find(h, "TessBaseAPISetSourceResolution", a.SetSourceResolution, missing);
    Find(h, "TessBaseAPISetRectangle", a.SetRectangle, missing);
    Find(h, "TessBaseAPIRecognize", a.Recognize, missing);
    Find(h, "TessBaseAPIClear", a.Clear, missing);
    Find(h, "TessBaseAPIGetIterator", a.GetIterator, missing);
    Find(h, "TessResultIteratorGetPageIterator", a.GetPageIterator, missing);
    Find(h, "TessPageIteratorBoundingBox", a.BoundingBox, missing);
    Find(h, "TessResultIteratorGetUTF8Text", a.GetUTF8Text, missing);
    Find(h, "TessResultIteratorConfidence", a.Confidence, missing);
    Find(h, "TessResultIteratorNext", a.Next, missing);
    Find(h, "TessPageIteratorIsAtBeginningOf", a.IsAtBeginningOf, missing);
    Find(h, "TessResultIteratorDelete", a.IteratorDelete, missing);
    Find(h, "TessDeleteText", a.DeleteText, missing);
    Find(h, "TessMonitorCreate", a.MonitorCreate, missing);
    Find(h, "TessMonitorDelete", a.MonitorDelete, missing);
    Find(h, "TessMonitorSetDeadlineMSecs", a.MonitorSetDeadlineMSecs, missing);
    if (!missing.empty())
      return {ErrorCode::kOcrUnavailable, std::string(name) + " has no " + missing + " (Tesseract 5 is needed)",
              kInstallHint};
    const char* version = a.Version();
    l->version_ = version ? version : "?";
    // Leptonica (loaded with Tesseract) reports every clipped box on stderr; the addon's host owns stderr.
    DlHandle lept(dlopen("liblept.so.5", RTLD_NOW | RTLD_NOLOAD));
    if (lept) {
      using SetSeverity = int (*)(int);
      if (auto set = reinterpret_cast<SetSeverity>(dlsym(lept.get(), "setMsgSeverity"))) set(kLeptSeverityNone);
    }
    l->lib_ = std::move(lib);
    out = std::move(l);
    return {};
  }

  const TessApi& api() const { return api_; }
  const std::string& version() const { return version_; }

 private:
  TessLibrary() = default;
  DlHandle lib_;
  TessApi api_{};
  std::string version_;
};

// RAII over the C API's objects; each deleter needs the function table.
class BaseApi {
 public:
  BaseApi(const TessApi& a, TessBaseAPI* p) : a_(a), p_(p) {}
  ~BaseApi() {
    a_.End(p_);
    a_.Delete(p_);
  }
  BaseApi(const BaseApi&) = delete;
  BaseApi& operator=(const BaseApi&) = delete;
  TessBaseAPI* get() const { return p_; }

 private:
  const TessApi& a_;
  TessBaseAPI* p_;
};

class Iterator {
 public:
  Iterator(const TessApi& a, TessResultIterator* p) : a_(a), p_(p) {}
  ~Iterator() {
    if (p_) a_.IteratorDelete(p_);
  }
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  TessResultIterator* get() const { return p_; }

 private:
  const TessApi& a_;
  TessResultIterator* p_;
};

class Text {
 public:
  Text(const TessApi& a, char* p) : a_(a), p_(p) {}
  ~Text() {
    if (p_) a_.DeleteText(p_);
  }
  Text(const Text&) = delete;
  Text& operator=(const Text&) = delete;
  std::string str() const { return p_ ? std::string(p_) : std::string(); }

 private:
  const TessApi& a_;
  char* p_;
};

class Monitor {
 public:
  Monitor(const TessApi& a, Clock::time_point deadline) : a_(a), p_(a.MonitorCreate()) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // The monitor counts from now; at least 1 ms (0 means "no deadline").
    if (p_) a_.MonitorSetDeadlineMSecs(p_, static_cast<int>(std::clamp<int64_t>(ms, 1, 600000)));
  }
  ~Monitor() {
    if (p_) a_.MonitorDelete(p_);
  }
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  ETEXT_DESC* get() const { return p_; }

 private:
  const TessApi& a_;
  ETEXT_DESC* p_;
};

// Drops results and image after each use (keeping the model), however the use ends.
class Cleared {
 public:
  Cleared(const TessApi& a, TessBaseAPI* p) : a_(a), p_(p) {}
  ~Cleared() { a_.Clear(p_); }
  Cleared(const Cleared&) = delete;
  Cleared& operator=(const Cleared&) = delete;

 private:
  const TessApi& a_;
  TessBaseAPI* p_;
};

bool ValidLanguage(const std::string& l) {
  return !l.empty() && l.size() <= 32 && std::all_of(l.begin(), l.end(), [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Debian's package for a language's data: tesseract-ocr-chi-sim for chi_sim.
std::string PackageOf(std::string lang) {
  std::transform(lang.begin(), lang.end(), lang.begin(),
                 [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
  return "tesseract-ocr-" + lang;
}

// A line is read again alone when the sparse pass was unsure of it or its text is tiny. Measured on
// test/apps/drawn-text.py (Sans 12-16): its lines' boxes are 10-15 px tall and read exactly at 1x, so a
// height rule at 12 px re-read half of them for +25% time and no change in text; re-reads pay off on
// tiny or low-contrast text (xmessage's 6x13 label read right only at 3x). The confidence rule at 0.93,
// not 0.85: xterm's 6x13 font read "brown" as "broun" in a line of confidence 0.91, right at 3x; on the
// other test windows (bench/ocr) the text read is the same, for +12 ms on the drawn text (the budget
// below bounds it) and nothing on gtk3-widget-factory.
constexpr double kRereadBelowConfidence = 0.93;
constexpr int kRereadBelowHeight = 8;
// Re-reads stop once they took this share of the sparse pass's time. Unbounded, gtk3-widget-factory
// (90 lines, many low-confidence ones from icons and borders) took 1061 ms warm instead of 403 ms.
constexpr double kRereadBudget = 0.1;
// The single-line read scales the crop so its text is about this tall (at most 3x).
constexpr int kLineTargetHeight = 36;
constexpr int kLinePad = 4;

// Small text is read upscaled (tessdoc's ImproveQuality: accuracy drops below an x-height of about 20 px,
// and below 8 px "most of the text will be noise removed"). At 1x, xmessage's 6x13 "fixed" buttons,
// drawn inside oval borders, were no text at all to the sparse pass; at 3x both read. The factor brings
// the region's typical glyph height (GlyphHeight: about an x-height) to kTargetGlyphHeight, at most
// kMaxRegionScale, and the scaled region at most kScaledPixelBudget pixels, which bounds the cost: a
// window that large is read as it is (gtk3-widget-factory, the drawn-text window: unchanged).
constexpr int kTargetGlyphHeight = 20;
constexpr int kMaxRegionScale = 4;
constexpr int64_t kScaledPixelBudget = 400'000;

// The median height of the region's glyph-like blobs of ink (8-connected pixels far in luminance from
// the region's most common one), 0 when there are none. Blobs much wider than tall, or taller than half
// the region, are rules and frames, not glyphs.
int GlyphHeight(const OcrImage& image, const PixelRect& r) {
  auto lum = [&image](int x, int y) {
    const uint8_t* p = image.rgba + static_cast<size_t>(y) * image.stride + static_cast<size_t>(x) * 4;
    return (p[0] * 299 + p[1] * 587 + p[2] * 114) / 1000;
  };
  int bands[16] = {0};
  for (int y = r.y; y < r.y + r.h; y++)
    for (int x = r.x; x < r.x + r.w; x++) bands[lum(x, y) / 16]++;
  const int mode = static_cast<int>(std::max_element(bands, bands + 16) - bands);
  const int background = mode * 16 + 8;
  constexpr int kInkContrast = 64;
  std::vector<uint8_t> ink(static_cast<size_t>(r.w) * r.h, 0);  // 1 = ink not yet in a blob
  for (int y = 0; y < r.h; y++)
    for (int x = 0; x < r.w; x++)
      ink[static_cast<size_t>(y) * r.w + x] = std::abs(lum(r.x + x, r.y + y) - background) >= kInkContrast;
  std::vector<int> heights, stack;
  for (int start = 0; start < r.w * r.h; start++) {
    if (!ink[start]) continue;
    ink[start] = 0;
    stack.assign(1, start);
    int x0 = r.w, x1 = -1, y0 = r.h, y1 = -1;
    while (!stack.empty()) {
      const int at = stack.back();
      stack.pop_back();
      const int x = at % r.w, y = at / r.w;
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
      for (int ny = std::max(0, y - 1); ny <= std::min(r.h - 1, y + 1); ny++)
        for (int nx = std::max(0, x - 1); nx <= std::min(r.w - 1, x + 1); nx++) {
          const int n = ny * r.w + nx;
          if (ink[n]) {
            ink[n] = 0;
            stack.push_back(n);
          }
        }
    }
    const int w = x1 - x0 + 1, h = y1 - y0 + 1;
    if (h >= 3 && h <= r.h / 2 && w <= 3 * h) heights.push_back(h);
  }
  if (heights.empty()) return 0;
  std::nth_element(heights.begin(), heights.begin() + heights.size() / 2, heights.end());
  return heights[heights.size() / 2];
}

// The largest factor, overridable for the benchmark only: AXSNAP_OCR_MAX_SCALE=1 reads every region as
// it is, to measure what scaling costs and finds (bench/ocr.ts). Not a user setting.
int MaxRegionScale() {
  const char* v = std::getenv("AXSNAP_OCR_MAX_SCALE");
  if (!v || !*v) return kMaxRegionScale;
  return std::clamp(std::atoi(v), 1, kMaxRegionScale);
}

// The factor a region is read at: 1 unless its text is small and the region small enough (see above).
int RegionScale(const OcrImage& image, const PixelRect& r) {
  const int64_t area = static_cast<int64_t>(r.w) * r.h;
  if (area <= 0) return 1;
  int most = MaxRegionScale();
  while (most > 1 && (area * most * most > kScaledPixelBudget || static_cast<int64_t>(r.w) * most > kMaxSide ||
                      static_cast<int64_t>(r.h) * most > kMaxSide))
    most--;
  if (most == 1) return 1;
  const int glyph = GlyphHeight(image, r);
  if (glyph <= 0) return 1;
  return std::clamp((kTargetGlyphHeight + glyph - 1) / glyph, 1, most);
}

// Bilinear upscale of a crop of `image` by an integer factor, RGBA out.
std::vector<uint8_t> UpscaledCrop(const OcrImage& image, const PixelRect& r, int s) {
  const int W = r.w * s, H = r.h * s;
  std::vector<uint8_t> out(static_cast<size_t>(W) * H * 4);
  for (int y = 0; y < H; y++) {
    const double fy = std::max(0.0, (y + 0.5) / s - 0.5);
    const int y0 = std::min(static_cast<int>(fy), r.h - 1), y1 = std::min(y0 + 1, r.h - 1);
    const double ty = fy - y0;
    const uint8_t* row0 = image.rgba + static_cast<size_t>(r.y + y0) * image.stride + static_cast<size_t>(r.x) * 4;
    const uint8_t* row1 = image.rgba + static_cast<size_t>(r.y + y1) * image.stride + static_cast<size_t>(r.x) * 4;
    uint8_t* o = out.data() + static_cast<size_t>(y) * W * 4;
    for (int x = 0; x < W; x++) {
      const double fx = std::max(0.0, (x + 0.5) / s - 0.5);
      const int x0 = std::min(static_cast<int>(fx), r.w - 1), x1 = std::min(x0 + 1, r.w - 1);
      const double tx = fx - x0;
      for (int c = 0; c < 4; c++) {
        const double top = (1 - tx) * row0[x0 * 4 + c] + tx * row0[x1 * 4 + c];
        const double bottom = (1 - tx) * row1[x0 * 4 + c] + tx * row1[x1 * 4 + c];
        o[x * 4 + c] = static_cast<uint8_t>((1 - ty) * top + ty * bottom + 0.5);
      }
    }
  }
  return out;
}

// A line as Tesseract iterated it, in the pixels of the image it read, with its words and their glyphs.
struct Box {
  int l = 0, t = 0, r = 0, b = 0;
};
struct Glyph {
  std::string text;
  Box box;
};
struct RawWord {
  std::vector<Glyph> glyphs;
  double confidence = 0;
  bool framedLeft = false, framedRight = false;
};
struct RawLine {
  std::string text;  // Tesseract's text of the line
  Box box;
  double confidence = 0;
  std::vector<RawWord> words;
};

std::string TextOf(const RawWord& w) {
  std::string s;
  for (const Glyph& g : w.glyphs) s += g.text;
  return s;
}

bool Opening(const std::string& s) { return s == "(" || s == "[" || s == "{" || s == "|"; }
bool Closing(const std::string& s) { return s == ")" || s == "]" || s == "}" || s == "|"; }

// A bracket at a word's edge this much taller than the line's other glyphs is no character but the frame
// drawn around the text: xmessage's oval buttons read "(Keep) (Discard)", one line, the "parentheses"
// 27 px tall around 9 px letters. A real parenthesis is about 1.3x a capital.
constexpr double kFrameGlyphRatio = 1.8;

// `raw` as lines: itself, its words listed, when none of its words is framed; else its frames dropped
// and one line per framed label (a frame ends a line and begins one), each boxed by its glyphs.
std::vector<OcrPixelLine> FramedLabels(RawLine& raw) {
  std::vector<int> heights;
  for (const RawWord& w : raw.words)
    for (const Glyph& g : w.glyphs)
      if (!Opening(g.text) && !Closing(g.text)) heights.push_back(g.box.b - g.box.t);
  bool framed = false;
  if (!heights.empty()) {
    std::nth_element(heights.begin(), heights.begin() + heights.size() / 2, heights.end());
    const double tall = kFrameGlyphRatio * heights[heights.size() / 2];
    auto frame = [tall](const Glyph& g) { return g.box.b - g.box.t > tall; };
    for (RawWord& w : raw.words) {
      while (!w.glyphs.empty() && Opening(w.glyphs.front().text) && frame(w.glyphs.front())) {
        w.glyphs.erase(w.glyphs.begin());
        w.framedLeft = framed = true;
      }
      while (!w.glyphs.empty() && Closing(w.glyphs.back().text) && frame(w.glyphs.back())) {
        w.glyphs.pop_back();
        w.framedRight = framed = true;
      }
    }
  }
  std::vector<OcrPixelLine> out;
  if (!framed) {
    OcrPixelLine line;
    line.text = raw.text;
    line.box = {raw.box.l, raw.box.t, raw.box.r - raw.box.l, raw.box.b - raw.box.t};
    line.confidence = raw.confidence;
    for (const RawWord& w : raw.words) line.words.push_back({TextOf(w), w.confidence});
    out.push_back(std::move(line));
    return out;
  }
  std::vector<std::vector<const RawWord*>> groups(1);
  for (const RawWord& w : raw.words) {
    if (w.glyphs.empty()) continue;
    if (w.framedLeft && !groups.back().empty()) groups.emplace_back();
    groups.back().push_back(&w);
    if (w.framedRight) groups.emplace_back();
  }
  for (const auto& group : groups) {
    if (group.empty()) continue;
    OcrPixelLine line;
    Box box = group.front()->glyphs.front().box;
    double weighted = 0, chars = 0;
    for (const RawWord* w : group) {
      const std::string text = TextOf(*w);
      line.text += (line.text.empty() ? "" : " ") + text;
      line.words.push_back({text, w->confidence});
      weighted += w->confidence * text.size();
      chars += text.size();
      for (const Glyph& g : w->glyphs) {
        box.l = std::min(box.l, g.box.l);
        box.t = std::min(box.t, g.box.t);
        box.r = std::max(box.r, g.box.r);
        box.b = std::max(box.b, g.box.b);
      }
    }
    line.box = {box.l, box.t, box.r - box.l, box.b - box.t};
    line.confidence = chars > 0 ? weighted / chars : 0;
    out.push_back(std::move(line));
  }
  return out;
}

class TesseractEngine : public OcrEngine {
 public:
  std::string Name() override { return lib_ ? "tesseract " + lib_->version() : "tesseract"; }

  Error Ready(const std::vector<std::string>& languages) override {
    TessBaseAPI* api = nullptr;
    return Engine(languages, api);
  }

  Error Recognize(const OcrImage& image, const OcrPixelRequest& request, std::vector<OcrPixelLine>& out) override {
    if (image.width > kMaxSide || image.height > kMaxSide)
      return {ErrorCode::kInvalidArgument, "the capture is larger than Tesseract reads (32767 pixels a side)"};
    TessBaseAPI* api = nullptr;
    if (Error err = Engine(request.languages, api)) return err;
    const TessApi& a = lib_->api();
    const int ppi = static_cast<int>(std::lround(96 * (request.pixelsPerPoint > 0 ? request.pixelsPerPoint : 1)));
    for (const PixelRect& region : request.regions) {
      if (Clock::now() >= request.deadline) return {ErrorCode::kTimeout, "the deadline passed during recognition"};
      if (request.singleLine) {
        OcrPixelLine line;
        if (Error err = ReadLine(api, image, region, ppi, request.deadline, line)) return err;
        if (!line.text.empty()) out.push_back(std::move(line));
        continue;
      }
      std::vector<OcrPixelLine> lines;
      const Clock::time_point pass0 = Clock::now();
      {
        Cleared cleared(a, api);
        a.SetPageSegMode(api, kPsmSparseText);
        // Small text in a small region is read upscaled (see RegionScale); lines come back in capture pixels.
        const int scale = RegionScale(image, region);
        std::vector<uint8_t> scaled;
        if (scale > 1) {
          scaled = UpscaledCrop(image, region, scale);
          a.SetImage(api, scaled.data(), region.w * scale, region.h * scale, 4, region.w * scale * 4);
          a.SetSourceResolution(api, ppi * scale);
        } else {
          a.SetImage(api, image.rgba, image.width, image.height, 4, image.stride);
          a.SetSourceResolution(api, ppi);
          a.SetRectangle(api, region.x, region.y, region.w, region.h);
        }
        if (Error err = Run(api, request.deadline)) return err;
        if (scale > 1)
          Lines(api, region.x, region.y, scale, lines);
        else
          Lines(api, 0, 0, 1, lines);
      }
      // Least sure first, within a tenth of the pass's own time (see kRereadBudget).
      const auto budget = (Clock::now() - pass0) * kRereadBudget;
      std::vector<size_t> unsure;
      for (size_t i = 0; i < lines.size(); i++)
        if (lines[i].confidence < kRereadBelowConfidence || lines[i].box.h < kRereadBelowHeight) unsure.push_back(i);
      std::stable_sort(unsure.begin(), unsure.end(),
                       [&lines](size_t x, size_t y) { return lines[x].confidence < lines[y].confidence; });
      const Clock::time_point reread0 = Clock::now();
      for (size_t i : unsure) {
        if (Clock::now() - reread0 >= budget) break;
        OcrPixelLine again;
        if (Error err = ReadLine(api, image, lines[i].box, ppi, request.deadline, again)) return err;
        if (!again.text.empty() && again.confidence > lines[i].confidence) {
          lines[i].text = std::move(again.text);
          lines[i].confidence = again.confidence;
          lines[i].words = std::move(again.words);
        }
      }
      for (OcrPixelLine& line : lines) out.push_back(std::move(line));
    }
    return {};
  }

 private:
  // The initialised API for a language set, made on first use.
  Error Engine(const std::vector<std::string>& languages, TessBaseAPI*& out) {
    std::string key;
    for (const std::string& l : languages) {
      if (!ValidLanguage(l)) return {ErrorCode::kInvalidArgument, "not a Tesseract language code: \"" + l + "\""};
      key += (key.empty() ? "" : "+") + l;
    }
    if (!lib_) {
      if (loadError_) return loadError_;
      if (Error err = TessLibrary::Load(lib_)) {
        loadError_ = err;
        return err;
      }
    }
    auto it = apis_.find(key);
    if (it != apis_.end()) {
      out = it->second->get();
      return {};
    }
    const TessApi& a = lib_->api();
    TessBaseAPI* raw = a.Create();
    if (!raw) return {ErrorCode::kInternal, "TessBaseAPICreate failed"};
    auto api = std::make_unique<BaseApi>(a, raw);
    // NULL data path: the compiled-in tessdata (Debian: /usr/share/tesseract-ocr/5/tessdata), or TESSDATA_PREFIX.
    if (a.Init2(raw, nullptr, key.c_str(), kOemLstmOnly) != 0) {
      std::string packages;
      for (const std::string& l : languages) packages += " " + PackageOf(l);
      return {ErrorCode::kOcrUnavailable, "Tesseract has no data for \"" + key + "\" (packages:" + packages + ")",
              "install it: apt-get install" + packages};
    }
    a.SetVariable(raw, "debug_file", "/dev/null");
    // A few language sets at most are in use; beyond that one model is dropped to bound the memory.
    if (apis_.size() >= 4) apis_.erase(apis_.begin());
    out = raw;
    apis_[key] = std::move(api);
    return {};
  }

  Error Run(TessBaseAPI* api, Clock::time_point deadline) {
    const TessApi& a = lib_->api();
    Monitor monitor(a, deadline);
    if (a.Recognize(api, monitor.get()) != 0) {
      if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed during recognition"};
      return {ErrorCode::kInternal, "Tesseract could not recognise the image"};
    }
    return {};
  }

  // The text lines of the last recognition, boxes mapped from an image scaled by `scale` at (dx, dy).
  // A line's box spans its words' boxes across: in sparse mode Tesseract can box a line by a part of
  // it (Tk's "Press me" button: the line's box held "me" alone, its one word's box both words), and a
  // re-read or a click of that part alone misses the rest. Across only: a word's box can be taller
  // than its line (gtk3-widget-factory's link button, 24 px for a 12 px line), and a taller box would
  // re-read the line less upscaled (measured: "link button" then read as "nk button").
  // Each line lists its words with their confidences (what marks a line unsure), and a line whose words
  // are framed (FramedLabels) is cut into one line per framed label.
  void Lines(TessBaseAPI* api, int dx, int dy, int scale, std::vector<OcrPixelLine>& out) {
    const TessApi& a = lib_->api();
    Iterator it(a, a.GetIterator(api));
    if (!it.get()) return;
    const TessPageIterator* page = a.GetPageIterator(it.get());
    std::vector<RawLine> lines;
    bool open = false;      // the symbols now iterated belong to lines.back()
    bool wordOpen = false;  // ... and to lines.back().words.back()
    do {
      int l = 0, t = 0, r = 0, b = 0;
      if (a.IsAtBeginningOf(page, kRilTextline)) {
        wordOpen = false;
        open = a.BoundingBox(page, kRilTextline, &l, &t, &r, &b) != 0;
        if (!open) continue;
        Text text(a, a.GetUTF8Text(it.get(), kRilTextline));
        RawLine raw;
        raw.box = {l, t, r, b};
        raw.text = text.str();
        while (!raw.text.empty() && (raw.text.back() == '\n' || raw.text.back() == ' ')) raw.text.pop_back();
        raw.confidence = a.Confidence(it.get(), kRilTextline) / 100.0;
        lines.push_back(std::move(raw));
      }
      if (!open) continue;
      RawLine& line = lines.back();
      if (a.IsAtBeginningOf(page, kRilWord)) {
        wordOpen = a.BoundingBox(page, kRilWord, &l, &t, &r, &b) != 0;
        if (!wordOpen) continue;
        line.box.l = std::min(line.box.l, l);
        line.box.r = std::max(line.box.r, r);
        line.words.push_back({{}, a.Confidence(it.get(), kRilWord) / 100.0, false, false});
      }
      if (wordOpen && a.BoundingBox(page, kRilSymbol, &l, &t, &r, &b)) {
        Text symbol(a, a.GetUTF8Text(it.get(), kRilSymbol));
        line.words.back().glyphs.push_back({symbol.str(), {l, t, r, b}});
      }
    } while (a.Next(it.get(), kRilSymbol));
    // The smallest box of capture pixels holding the scaled one: pixel i of the capture is pixels
    // [i*scale, (i+1)*scale) of the scaled image (UpscaledCrop samples at pixel centres).
    auto down = [scale](int v) { return v >= 0 ? v / scale : -((-v + scale - 1) / scale); };
    auto up = [scale](int v) { return v >= 0 ? (v + scale - 1) / scale : -(-v / scale); };
    for (RawLine& raw : lines)
      for (OcrPixelLine& line : FramedLabels(raw)) {
        const PixelRect& s = line.box;  // scaled pixels
        const int x0 = down(s.x), y0 = down(s.y), x1 = up(s.x + s.w), y1 = up(s.y + s.h);
        line.box = {dx + x0, dy + y0, x1 - x0, y1 - y0};
        out.push_back(std::move(line));
      }
  }

  // `box` (padded) read alone as one line, upscaled when its text is small; lines joined when several came.
  Error ReadLine(TessBaseAPI* api, const OcrImage& image, const PixelRect& box, int ppi, Clock::time_point deadline,
                 OcrPixelLine& out) {
    const TessApi& a = lib_->api();
    PixelRect crop{std::max(0, box.x - kLinePad), std::max(0, box.y - kLinePad), 0, 0};
    crop.w = std::min(image.width, box.x + box.w + kLinePad) - crop.x;
    crop.h = std::min(image.height, box.y + box.h + kLinePad) - crop.y;
    if (crop.Empty()) return {};
    const int scale = std::clamp(kLineTargetHeight / std::max(1, box.h), 1, 3);
    if (static_cast<int64_t>(crop.w) * scale > kMaxSide) return {};
    std::vector<uint8_t> scaled;
    const uint8_t* data = image.rgba + static_cast<size_t>(crop.y) * image.stride + static_cast<size_t>(crop.x) * 4;
    int stride = image.stride;
    if (scale > 1) {
      scaled = UpscaledCrop(image, crop, scale);
      data = scaled.data();
      stride = crop.w * scale * 4;
    }
    std::vector<OcrPixelLine> lines;
    {
      Cleared cleared(a, api);
      a.SetPageSegMode(api, kPsmSingleLine);
      a.SetImage(api, data, crop.w * scale, crop.h * scale, 4, stride);
      a.SetSourceResolution(api, ppi * scale);
      if (Error err = Run(api, deadline)) return err;
      Lines(api, crop.x, crop.y, scale, lines);
    }
    out = OcrPixelLine{};
    double weighted = 0, chars = 0;
    for (const OcrPixelLine& l : lines) {
      if (l.text.empty()) continue;
      if (!out.text.empty()) out.text += ' ';
      out.text += l.text;
      out.words.insert(out.words.end(), l.words.begin(), l.words.end());
      weighted += l.confidence * l.text.size();
      chars += l.text.size();
      if (out.box.Empty()) {
        out.box = l.box;
      } else {
        const int x1 = std::max(out.box.x + out.box.w, l.box.x + l.box.w);
        const int y1 = std::max(out.box.y + out.box.h, l.box.y + l.box.h);
        out.box.x = std::min(out.box.x, l.box.x);
        out.box.y = std::min(out.box.y, l.box.y);
        out.box.w = x1 - out.box.x;
        out.box.h = y1 - out.box.y;
      }
    }
    out.confidence = chars > 0 ? weighted / chars : 0;
    return {};
  }

  std::unique_ptr<TessLibrary> lib_;
  Error loadError_;
  std::map<std::string, std::unique_ptr<BaseApi>> apis_;
};

}  // namespace

std::unique_ptr<OcrEngine> CreateTesseractEngine() { return std::make_unique<TesseractEngine>(); }

}  // namespace axsnap
