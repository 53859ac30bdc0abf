// VNRecognizeTextRequest exists since 10.15 but automaticallyDetectsLanguage
// only since 13.0: the Vision engine (ocr_vision.mm) must guard it.
// expect: 'setAutomaticallyDetectsLanguage:' is only available on macOS 13.0 or newer
// targets: darwin-arm64 darwin-x86_64
#include "decls/apple_objc.h"

void Configure(VNRecognizeTextRequest* request) {
  request.usesLanguageCorrection = NO;
  request.automaticallyDetectsLanguage = YES;
}
