// The screenshot size budget: longest side <= 1280 px, <= 900 KB, never below
// 0.25 of the captured scale. The first encode measures bytes per pixel; the
// scale for the second is predicted from it (bytes grow with pixel area), so
// the budget is met in at most two encodes in the common case instead of
// shrinking by 0.85 at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "types.h"

namespace axsnap {

struct BudgetOptions {
  int maxSide = 1280;
  size_t maxBytes = 900 * 1024;
  double minScale = 0.25;  // relative to the captured pixels
  int zlibLevel = 1;       // measured: level 1 is 3-4x faster than 6 for screenshots
};

// Encodes `rgba` (width*height*4 bytes, row stride width*4) as PNG within the
// budget. `pixelsPerPoint` is the captured pixels per window point (the
// display scale); out.scale becomes pixelsPerPoint * the downscale applied.
// `decorate`, when given, draws on a copy of each step's (downscaled) pixels
// just before that step's one encode (marks.h); `rgba` is never written.
using Decorate = std::function<void(uint8_t* rgba, int width, int height)>;
Error EncodeWithinBudget(const uint8_t* rgba, int width, int height, double pixelsPerPoint,
                         const BudgetOptions& options, Screenshot& out, const Decorate& decorate = nullptr);

// Encodes without resizing (used by EncodeWithinBudget and tests).
Error EncodePng(const uint8_t* rgba, int width, int height, int zlibLevel, std::vector<uint8_t>& png);

// Box-filter downscale of RGBA pixels to (outW, outH).
void Downscale(const uint8_t* rgba, int width, int height, int outW, int outH, std::vector<uint8_t>& out);

}  // namespace axsnap
