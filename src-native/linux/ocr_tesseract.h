// The Linux OCR engine: Tesseract 5 through its C API (tesseract/capi.h),
// loaded at run time with dlopen, so the addon links nothing of it and loads
// where Tesseract is not installed (there, recognition is kOcrUnavailable
// naming the apt packages). See ocr_tesseract.cc for the measured choices.
#pragma once

#include <memory>

#include "../core/ocr.h"

namespace axsnap {

// Loads nothing until the first Recognize.
std::unique_ptr<OcrEngine> CreateTesseractEngine();

}  // namespace axsnap
