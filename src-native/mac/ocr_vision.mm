// Vision as an OcrEngine (ocr_vision.h). Apple documentation:
// VNRecognizeTextRequest (recognitionLevel, usesLanguageCorrection,
// recognitionLanguages, automaticallyDetectsLanguage from macOS 13),
// VNImageRequestHandler -initWithCGImage:options: and -performRequests:error:
// (synchronous, so it runs on the backend's worker with no run loop),
// VNRecognizedTextObservation (boundingBox normalised, origin bottom left;
// -topCandidates:), CGBitmapContextCreate / CGBitmapContextCreateImage and
// CGImageCreateWithImageInRect for the image;
// -supportedRecognitionLanguagesAndReturnError: (macOS 12) and
// minimumTextHeight, through vision_rules.h.
//
// One observation is one line of text, which is the seam's line. Language
// correction is off: UI labels are not sentences, and a corrected word is not
// what the screen shows. Each region reads text down to 6 pt
// (VisionMinimumTextHeight; Vision's default ignores text under 1/32 of the
// region's height, 37 px of a 600-pt window at 2x). Compiled with ARC; the
// worker job's autorelease pool (MacSystem::PushAutoreleasePool) drains what
// Vision autoreleases.

#include "ocr_vision.h"

#include "vision_rules.h"

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#import <CoreGraphics/CoreGraphics.h>
#import <Foundation/Foundation.h>
#import <Vision/Vision.h>
#else
#include "decls/apple_objc.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace axsnap {
namespace {

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

  // Vision ships with macOS 10.15 and later. The languages are checked against what this Mac's Vision lists
  // for the request Recognize makes, before anything is captured (review 3, S2): macOS 12's revision 2 reads
  // 8 of the 12 mapped, and an unlisted one would fail only inside -performRequests:error:.
  Error Ready(const std::vector<std::string>& languages) override {
    std::vector<std::string> mapped;
    return VisionLanguagesFor(languages, Supported(), mapped);
  }

  Error Recognize(const OcrImage& image, const OcrPixelRequest& request, std::vector<OcrPixelLine>& out) override {
    std::vector<std::string> mapped;
    if (Error err = VisionLanguagesFor(request.languages, Supported(), mapped)) return err;
    NSMutableArray<NSString*>* languages = [[NSMutableArray alloc] init];
    for (const std::string& language : mapped) [languages addObject:[NSString stringWithUTF8String:language.c_str()]];
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
      VNRecognizeTextRequest* text = NewRequest();
      text.recognitionLanguages = languages;
      if (!KeepDefaultTextHeight())
        text.minimumTextHeight = static_cast<float>(VisionMinimumTextHeight(region.h, request.pixelsPerPoint));
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

 private:
  // For measuring on a Mac what the setting changes, only: AXSNAP_VISION_DEFAULT_TEXT_HEIGHT=1 leaves
  // minimumTextHeight at Vision's default (1/32 of each region).
  static bool KeepDefaultTextHeight() {
    const char* v = std::getenv("AXSNAP_VISION_DEFAULT_TEXT_HEIGHT");
    return v && *v && std::string(v) != "0";
  }

  // The request as Recognize makes it: what it reads depends on its revision (the default one) and level.
  static VNRecognizeTextRequest* NewRequest() {
    VNRecognizeTextRequest* text = [[VNRecognizeTextRequest alloc] init];
    text.recognitionLevel = VNRequestTextRecognitionLevelAccurate;
    text.usesLanguageCorrection = NO;
    return text;
  }

  // The BCP 47 codes this Mac's Vision reads with that request, asked once; nullptr when Vision gave no list
  // (then every mapped language is tried, and Vision's own error says the rest).
  const std::vector<std::string>* Supported() {
    if (!askedSupported_) {
      askedSupported_ = true;
      NSError* error = nil;
      NSArray<NSString*>* list = [NewRequest() supportedRecognitionLanguagesAndReturnError:&error];
      if (list) {
        haveSupported_ = true;
        for (NSString* language in list)
          if (const char* utf8 = language.UTF8String) supported_.push_back(utf8);
      }
    }
    return haveSupported_ ? &supported_ : nullptr;
  }

  bool askedSupported_ = false, haveSupported_ = false;
  std::vector<std::string> supported_;
};

}  // namespace

std::unique_ptr<OcrEngine> CreateVisionEngine() { return std::make_unique<VisionEngine>(); }

}  // namespace axsnap
