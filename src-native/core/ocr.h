// The OCR seam: text read off a window's captured pixels, in the window's
// own points, by whichever engine the platform has (Tesseract on Linux,
// Vision on macOS, a scripted one in the fake backend).
//
// An engine sees only pixels: RGBA rows, the pixel rectangles to read and the
// languages. This file owns everything around it that is the same for every
// engine: the window-relative points <-> capture pixels mapping (the
// coordinate contract of a snapshot's screenshot: pixel (0, 0) is the
// capture's top-left corner, pixelsPerPoint pixels per point), painting out
// the blanked rectangles (secure fields, regions already named by the tree)
// in a copy before any engine sees the image, and dropping noise lines.
// Pixels never leave the process: the result is text and frames only.
//
// Documentation: Tesseract's C API (tesseract/capi.h, 5.x) for what the
// Linux engine calls; Apple's Vision (VNRecognizeTextRequest) for macOS.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "types.h"

namespace axsnap {

class Backend;
using Clock = std::chrono::steady_clock;

// A rectangle of capture pixels, already clipped to the image.
struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
  bool Empty() const { return w <= 0 || h <= 0; }
};

// A capture as an engine reads it. The buffer is borrowed for the call.
struct OcrImage {
  const uint8_t* rgba = nullptr;
  int width = 0, height = 0, stride = 0;  // stride in bytes
  double pixelsPerPoint = 1;
  // The window-relative point that pixel (0, 0) shows: not (0, 0) when the
  // capture was clipped to the screen.
  double originX = 0, originY = 0;
};

// What recognizeText asks (lib/native.ts NativeBackend.recognizeText).
struct OcrOptions {
  std::vector<Rect> regions;  // window-relative points; empty = the whole capture
  std::vector<Rect> blanks;   // window-relative points painted out first
  // Tesseract codes ("eng", "chi_sim"); empty = ["eng"]. Vision maps them.
  std::vector<std::string> languages;
  // Each region is one line (the identity re-check of an OCR line).
  bool singleLine = false;
  // No recognition: each region's ink (InkOf) only, one line per region with empty text. An OCR line's
  // identity check compares what stays the same on unchanged pixels, not a fresh reading.
  bool inkOnly = false;
  Clock::time_point deadline;
};

// A word of a line as the engine read it: what marks a line unsure is its least sure word (a number read
// at 0.6 in a line of 0.9 is still a guess). Engines that read whole lines only (Vision) give none.
struct OcrWord {
  std::string text;
  double confidence = 0;  // 0..1
};

struct OcrLine {
  std::string text;
  Rect frame;             // window-relative points
  double confidence = 0;  // 0..1
  std::string ink;        // InkOf its box: "WxH:hex"
  std::vector<OcrWord> words;
};

struct OcrResult {
  std::string engine;  // "tesseract 5.3.0" | "vision" | "fake"
  std::vector<OcrLine> lines;
  double captureMs = 0, ocrMs = 0;
};

// One line as an engine found it, in capture pixels.
struct OcrPixelLine {
  std::string text;
  PixelRect box;
  double confidence = 0;  // 0..1
  std::vector<OcrWord> words;
};

// What an engine is asked: the pixel form of OcrOptions.
struct OcrPixelRequest {
  std::vector<PixelRect> regions;  // never empty: the whole image is one region
  std::vector<std::string> languages;
  bool singleLine = false;
  double pixelsPerPoint = 1;  // the engine's resolution hint (96 ppi per point)
  Clock::time_point deadline;
};

// An OCR engine. Used from one thread at a time (the backend's worker); it
// may keep models loaded between calls.
class OcrEngine {
 public:
  virtual ~OcrEngine() = default;
  // "tesseract 5.3.0", "vision": known once the engine loaded.
  virtual std::string Name() = 0;
  // Lines of every region of `image` (already blanked), regions in order,
  // each region's lines in reading order. kOcrUnavailable when the engine or
  // a language's data is missing (the message names what to install).
  virtual Error Recognize(const OcrImage& image, const OcrPixelRequest& request, std::vector<OcrPixelLine>& out) = 0;
  // Loads what recognising `languages` needs (kOcrUnavailable as Recognize would say): asked before the
  // window is captured, so a machine without the engine captures nothing for it.
  virtual Error Ready(const std::vector<std::string>& languages) = 0;
};

// The languages a request reads: ["eng"] unless it names some.
std::vector<std::string> OcrLanguages(const std::vector<std::string>& asked);

// Window-relative points -> capture pixels, rounded outwards, clipped to the image.
PixelRect ToPixels(const OcrImage& image, const Rect& points);
// Capture pixels -> window-relative points.
Rect ToPoints(const OcrImage& image, const PixelRect& pixels);

// Paints each rectangle with the colour most common on the ring of pixels just
// outside it (the background it sits on), so that no edge of it is left to read.
void BlankRects(uint8_t* rgba, int width, int height, int stride, const std::vector<PixelRect>& rects);

// The shape of what is drawn in a box, apart from its colours: each pixel is ink when its luminance is far
// from the box's most common one (its background), and the box is cut into 2x2-pixel cells (coarser past
// 256 columns or 32 rows), a cell being ink when any of its pixels is. "COLSxROWS:" then the cells' bits,
// row by row, as hex. A hover that repaints a menu item's background or its text's colour keeps the shape;
// other text, or the same text moved, does not. Two readings of unchanged pixels are the same string.
std::string InkOf(const OcrImage& image, const PixelRect& box);

// Lines a reader would not want: empty or whitespace-only text, confidence below this.
constexpr double kOcrMinConfidence = 0.3;

// Blanks a copy, maps regions, runs `engine`, maps and filters its lines into
// `out` (engine name and ocrMs set; captureMs left to the caller).
Error RecognizeImage(OcrEngine& engine, const OcrImage& image, const OcrOptions& options, OcrResult& out);

// inkOnly: each region's InkOf, after the blanks are painted out (no engine).
Error InkRegions(const OcrImage& image, const OcrOptions& options, OcrResult& out);

// recognizeText: captures `window` through backend.Capture (the screenshot's
// path, with its guards), then backend.RecognizeText on the pixels.
Error RecognizeWindowText(Backend& backend, const WindowInfo& window, const OcrOptions& options, OcrResult& out);

}  // namespace axsnap
