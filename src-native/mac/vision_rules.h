// Settings of a Vision text request that need no Objective-C, so that the
// engine (ocr_vision.mm, which only a Mac runs) and the fake-layer tests
// (test/native/macfake/vision_rules_js.cc) use the same code: how small a text
// each request reads (VisionMinimumTextHeight), and which of the languages
// asked for, by Tesseract's codes (the OCR seam's), this Mac's Vision reads
// (VisionLanguagesFor).
//
// Apple: VNRecognizeTextRequest.minimumTextHeight ("the minimum height,
// relative to the image height, of the text to recognize ... ignoring text
// smaller than the minimum height. The default value is 1/32"), and
// -supportedRecognitionLanguagesAndReturnError: (macOS 12: the languages of the
// request's revision and recognition level, as BCP 47 codes).
//
// Header-only: both addons include it without another source file to list.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "../core/types.h"

namespace axsnap {

// The smallest text a snapshot's OCR means to read, in points. macOS's
// smallest standard text is the mini control size's 9-pt font; whether Vision
// measures a line's box (about the font size) or its capitals (about 0.7 of
// it, 6.3 pt at 9 pt), 6 pt keeps it (review 3, M8).
constexpr double kSmallestTextPoints = 6;
// Vision's own minimumTextHeight when none is set (Apple's documentation).
constexpr double kVisionDefaultMinimumTextHeight = 1.0 / 32;

// minimumTextHeight for a region `regionHeightPx` capture pixels tall at
// `pixelsPerPoint`: kSmallestTextPoints as a fraction of the region. Never
// above Vision's default, so that no region reads less than it did without
// the setting: only tall regions (a whole window: a 600-pt window at 2x keeps
// 12-px text, where the default 1/32 dropped text under 37 px) change. A
// pixels-per-point that is not a positive number counts as 1; an empty region
// keeps the default.
inline double VisionMinimumTextHeight(int regionHeightPx, double pixelsPerPoint) {
  if (regionHeightPx <= 0) return kVisionDefaultMinimumTextHeight;
  const double scale = pixelsPerPoint > 0 && std::isfinite(pixelsPerPoint) ? pixelsPerPoint : 1;
  return std::min(kVisionDefaultMinimumTextHeight, kSmallestTextPoints * scale / regionHeightPx);
}

// Tesseract's codes (the seam's) and the BCP 47 codes Vision names the same languages by.
inline const std::vector<std::pair<std::string, std::string>>& VisionLanguageTable() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"eng", "en-US"}, {"chi_sim", "zh-Hans"}, {"chi_tra", "zh-Hant"}, {"fra", "fr-FR"},
      {"deu", "de-DE"}, {"spa", "es-ES"},       {"ita", "it-IT"},       {"por", "pt-BR"},
      {"jpn", "ja-JP"}, {"kor", "ko-KR"},       {"rus", "ru-RU"},       {"ukr", "uk-UA"},
  };
  return table;
}

// Whether Vision's list names `bcp47` (compared without regard to case, "_" as "-").
inline bool VisionListNames(const std::vector<std::string>& supported, const std::string& bcp47) {
  auto norm = [](std::string s) {
    for (char& c : s) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string want = norm(bcp47);
  return std::any_of(supported.begin(), supported.end(), [&](const std::string& s) { return norm(s) == want; });
}

// The codes ocrLanguages can name for Vision, ", "-separated: all it maps, or
// with `supported` (Vision's list on this Mac) those it maps and lists.
inline std::string VisionLanguageCodes(const std::vector<std::string>* supported = nullptr) {
  std::string out;
  for (const auto& [code, bcp47] : VisionLanguageTable())
    if (!supported || VisionListNames(*supported, bcp47)) out += (out.empty() ? "" : ", ") + code;
  return out;
}

// The BCP 47 codes Vision is given for `codes`, in their order, into `out`.
// kOcrUnavailable for the first code it cannot read: one the table does not
// map, or, when `supported` is given (what -supportedRecognitionLanguages
// answered on this Mac), one whose BCP 47 code that list does not name (the
// review found Japanese, Korean, Russian and Ukrainian missing from macOS 12's
// revision 2). The hint names the codes that would work here.
inline Error VisionLanguagesFor(const std::vector<std::string>& codes, const std::vector<std::string>* supported,
                                std::vector<std::string>& out) {
  out.clear();
  for (const std::string& code : codes) {
    const auto& table = VisionLanguageTable();
    auto it = std::find_if(table.begin(), table.end(), [&](const auto& entry) { return entry.first == code; });
    if (it == table.end())
      return {ErrorCode::kOcrUnavailable, "Vision does not read the language \"" + code + "\"",
              "pass ocrLanguages Vision reads: " + VisionLanguageCodes(supported)};
    if (supported && !VisionListNames(*supported, it->second)) {
      const std::string here = VisionLanguageCodes(supported);
      std::string listed;
      for (const std::string& s : *supported) listed += (listed.empty() ? "" : ", ") + s;
      return {ErrorCode::kOcrUnavailable,
              "this Mac's Vision does not read the language \"" + code + "\" (" + it->second +
                  "): its text recognition lists " + (listed.empty() ? "no languages" : "only " + listed),
              here.empty()
                  ? "Vision here reads none of the languages ocrLanguages can name; take the snapshot with "
                    "ocr: \"auto\" or false and look at its screenshot"
                  : "pass ocrLanguages this Mac's Vision reads: " + here + " (a later macOS reads more languages)"};
    }
    out.push_back(it->second);
  }
  return {};
}

}  // namespace axsnap
