// The macOS OCR engine: Apple's Vision (VNRecognizeTextRequest, accurate level,
// language correction off) over the backend's capture, as an OcrEngine
// (core/ocr.h). Implemented in ocr_vision.mm; only the AppKit MacSystem makes
// one (the fake mac layer has no Vision, so OCR there is kOcrUnavailable).
#pragma once

#include <memory>

#include "../core/ocr.h"

namespace axsnap {

std::unique_ptr<OcrEngine> CreateVisionEngine();

}  // namespace axsnap
