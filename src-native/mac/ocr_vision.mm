// Vision as an OcrEngine (ocr_vision.h). Apple documentation:
// VNRecognizeTextRequest (recognitionLevel, usesLanguageCorrection,
// recognitionLanguages, automaticallyDetectsLanguage from macOS 13),
// VNImageRequestHandler -initWithCGImage:options: and -performRequests:error:
// (synchronous, so it runs on the backend's worker with no run loop),
// VNRecognizedTextObservation (boundingBox normalised, origin bottom left;
// -topCandidates:), CGBitmapContextCreate / CGBitmapContextCreateImage and
// CGImageCreateWithImageInRect for the image.
//
// One observation is one line of text, which is the seam's line. Language
// correction is off: UI labels are not sentences, and a corrected word is not
// what the screen shows. Compiled with ARC; the worker job's autorelease pool
// (MacSystem::PushAutoreleasePool) drains what Vision autoreleases.

#include "ocr_vision.h"

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#import <CoreGraphics/CoreGraphics.h>
#import <Foundation/Foundation.h>
#import <Vision/Vision.h>
#else
#include "decls/apple_objc.h"
#endif

#include <algorithm>
#include <string>
#include <vector>

namespace axsnap {
namespace {

// Tesseract's codes (the seam's) to Vision's BCP 47 ones; nullptr for one Vision does not read.
const std::pair<const char*, const char*> kVisionLanguages[] = {
    {"eng", "en-US"}, {"chi_sim", "zh-Hans"}, {"chi_tra", "zh-Hant"}, {"fra", "fr-FR"},
    {"deu", "de-DE"}, {"spa", "es-ES"},       {"ita", "it-IT"},       {"por", "pt-BR"},
    {"jpn", "ja-JP"}, {"kor", "ko-KR"},       {"rus", "ru-RU"},       {"ukr", "uk-UA"},
};

const char* VisionLanguage(const std::string& code) {
  for (const auto& [from, to] : kVisionLanguages)
    if (code == from) return to;
  return nullptr;
}

// The languages VisionLanguage maps, as ocrLanguages takes them: the hint of a language it does not.
std::string VisionLanguages() {
  std::string out;
  for (const auto& language : kVisionLanguages) out += (out.empty() ? "" : ", ") + std::string(language.first);
  return out;
}

// The CF objects of one call, released however it ends.
struct CgImage {
  CGImageRef ref = nullptr;
  ~CgImage() { CGImageRelease(ref); }
};
struct CgContext {
  CGContextRef ref = nullptr;
  ~CgContext() { CGContextRelease(ref); }
};
struct CgSpace {
  CGColorSpaceRef ref = nullptr;
  ~CgSpace() { CGColorSpaceRelease(ref); }
};

class VisionEngine : public OcrEngine {
 public:
  std::string Name() override { return "vision"; }

  // Vision ships with macOS 10.15 and later; which languages it reads is its own to say when it runs.
  Error Ready(const std::vector<std::string>&) override { return {}; }

  Error Recognize(const OcrImage& image, const OcrPixelRequest& request, std::vector<OcrPixelLine>& out) override {
    NSMutableArray<NSString*>* languages = [[NSMutableArray alloc] init];
    for (const std::string& code : request.languages) {
      const char* mapped = VisionLanguage(code);
      if (!mapped)
        return {ErrorCode::kOcrUnavailable, "Vision does not read the language \"" + code + "\"",
                "pass ocrLanguages Vision reads: " + VisionLanguages()};
      [languages addObject:[NSString stringWithUTF8String:mapped]];
    }
    // The user's own languages, found by Vision, when only the default (English) was asked for.
    const bool detect = request.languages.size() == 1 && request.languages[0] == "eng";

    CgSpace space{CGColorSpaceCreateDeviceRGB()};
    // Our capture is RGBA rows; the context only wraps them for the image copy below.
    CgContext context{CGBitmapContextCreate(const_cast<uint8_t*>(image.rgba), static_cast<size_t>(image.width),
                                            static_cast<size_t>(image.height), 8, static_cast<size_t>(image.stride),
                                            space.ref, kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big)};
    if (!context.ref) return {ErrorCode::kCaptureFailed, "the capture could not be wrapped for Vision"};
    CgImage whole{CGBitmapContextCreateImage(context.ref)};
    if (!whole.ref) return {ErrorCode::kCaptureFailed, "the capture could not be copied for Vision"};

    for (const PixelRect& region : request.regions) {
      if (Clock::now() >= request.deadline) return {ErrorCode::kTimeout, "the deadline passed during recognition"};
      CGRect rect;
      rect.origin.x = region.x;
      rect.origin.y = region.y;
      rect.size.width = region.w;
      rect.size.height = region.h;
      CgImage crop{CGImageCreateWithImageInRect(whole.ref, rect)};
      if (!crop.ref) continue;
      VNRecognizeTextRequest* text = [[VNRecognizeTextRequest alloc] init];
      text.recognitionLevel = VNRequestTextRecognitionLevelAccurate;
      text.usesLanguageCorrection = NO;
      text.recognitionLanguages = languages;
      if (@available(macOS 13.0, *)) text.automaticallyDetectsLanguage = detect ? YES : NO;
      VNImageRequestHandler* handler = [[VNImageRequestHandler alloc] initWithCGImage:crop.ref
                                                                              options:[NSDictionary dictionary]];
      NSError* error = nil;
      if (![handler performRequests:[NSArray arrayWithObject:text] error:&error]) {
        const char* why = error ? error.localizedDescription.UTF8String : nullptr;
        return {ErrorCode::kInternal, std::string("Vision could not read the capture: ") + (why ? why : "unknown")};
      }
      std::vector<OcrPixelLine> lines;
      for (VNObservation* o in text.results) {
        VNRecognizedTextObservation* observation = (VNRecognizedTextObservation*)o;
        NSArray<VNRecognizedText*>* best = [observation topCandidates:1];
        if (best.count == 0) continue;
        VNRecognizedText* reading = [best objectAtIndex:0];
        const char* utf8 = reading.string.UTF8String;
        if (!utf8) continue;
        const CGRect bb = observation.boundingBox;
        OcrPixelLine line;
        line.text = utf8;
        line.confidence = reading.confidence;
        // Normalised, bottom-left origin, of the crop -> capture pixels, top-left origin.
        line.box.x = region.x + static_cast<int>(bb.origin.x * region.w);
        line.box.y = region.y + static_cast<int>((1 - bb.origin.y - bb.size.height) * region.h);
        line.box.w = static_cast<int>(bb.size.width * region.w + 0.5);
        line.box.h = static_cast<int>(bb.size.height * region.h + 0.5);
        lines.push_back(std::move(line));
      }
      std::stable_sort(lines.begin(), lines.end(), [](const OcrPixelLine& a, const OcrPixelLine& b) {
        return a.box.y + a.box.h / 2 < b.box.y || (a.box.y < b.box.y + b.box.h / 2 && a.box.x < b.box.x);
      });
      if (request.singleLine && lines.size() > 1) {
        OcrPixelLine joined = lines[0];
        for (size_t i = 1; i < lines.size(); i++) {
          joined.text += " " + lines[i].text;
          joined.confidence = std::min(joined.confidence, lines[i].confidence);
          const int x1 = std::max(joined.box.x + joined.box.w, lines[i].box.x + lines[i].box.w);
          const int y1 = std::max(joined.box.y + joined.box.h, lines[i].box.y + lines[i].box.h);
          joined.box.x = std::min(joined.box.x, lines[i].box.x);
          joined.box.y = std::min(joined.box.y, lines[i].box.y);
          joined.box.w = x1 - joined.box.x;
          joined.box.h = y1 - joined.box.y;
        }
        lines.assign(1, std::move(joined));
      }
      for (OcrPixelLine& l : lines) out.push_back(std::move(l));
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<OcrEngine> CreateVisionEngine() { return std::make_unique<VisionEngine>(); }

}  // namespace axsnap
