// Where a native Wayland window's AT-SPI coordinates start on screen.
//
// A Wayland client does not know its position, so AT-SPI extents of its
// elements are relative to the window (at-spi2 WINDOW coordinates; GTK3 and
// GTK4 answer the same for SCREEN). Which window rectangle they are relative
// to depends on the toolkit: GTK3 and Chromium measure from the surface
// buffer's origin (client-side shadow included), GTK4 4.8 from the frame
// (the visible window without its shadow). The compositor knows both
// rectangles; the AT-SPI window's own size says which one the toolkit used.
// Pure and header-only: unit tested by test/native/wayland_frames_test.cc.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "../core/types.h"

namespace axsnap {

struct WaylandPlacement {
  Rect origin;               // the compositor rectangle the AT-SPI coordinates start at, in screen space
  bool fromFrame = false;    // the frame rect (GTK4); else the buffer rect (GTK3, Chromium)
  bool sizeMatched = false;  // the AT-SPI window's size equals that rectangle's (else: the buffer, by default)
};

inline bool SameSize(double w, double h, const Rect& r) { return std::fabs(w - r.w) < 0.5 && std::fabs(h - r.h) < 0.5; }

// `atspiW`x`atspiH`: the AT-SPI window's own extents size. The frame wins only
// when its size is the AT-SPI size (a window whose frame and buffer are the
// same size, with no shadow, starts at the same point either way).
inline WaylandPlacement PlaceWaylandWindow(double atspiW, double atspiH, const Rect& frame, const Rect& buffer) {
  WaylandPlacement p;
  if (SameSize(atspiW, atspiH, frame) && !SameSize(atspiW, atspiH, buffer)) {
    p.origin = frame;
    p.fromFrame = true;
    p.sizeMatched = true;
    return p;
  }
  p.origin = buffer;
  p.sizeMatched = SameSize(atspiW, atspiH, buffer);
  return p;
}

// A window-relative AT-SPI rectangle in screen space. Hidden widgets keep
// their sentinel coordinate (kHiddenCoordinate), which marks them hidden.
inline Rect WindowToScreen(const Rect& r, const WaylandPlacement& p) {
  Rect out = r;
  if (r.x != kHiddenCoordinate) out.x = r.x + p.origin.x;
  if (r.y != kHiddenCoordinate) out.y = r.y + p.origin.y;
  return out;
}

// A screen point back in the window's coordinates (hit-testing through AT-SPI).
inline void ScreenToWindow(double& x, double& y, const WaylandPlacement& p) {
  x -= p.origin.x;
  y -= p.origin.y;
}

// A capture of a window out of the monitor's image (`captured`: its screen rect, one pixel per point) holds,
// outside the window's frame, the client-side shadow's margin of its buffer; through that translucent shadow the
// monitor shows whatever lies behind: another window's text, which OCR would read as this window's, and where
// a click would reach the window behind (the shadow takes no input). Those pixels are made transparent white
// (no text for OCR, nothing for a model to take as the window's); the frame's pixels are kept as drawn.
inline void ClearOutsideFrame(uint8_t* rgba, int width, int height, const Rect& captured, const Rect& frame) {
  if (rgba == nullptr || width <= 0 || height <= 0) return;
  const auto clampTo = [](double v, int hi) { return std::clamp(static_cast<int>(std::lround(v)), 0, hi); };
  const int x0 = clampTo(frame.x - captured.x, width), x1 = clampTo(frame.x + frame.w - captured.x, width);
  const int y0 = clampTo(frame.y - captured.y, height), y1 = clampTo(frame.y + frame.h - captured.y, height);
  static const uint8_t kClear[4] = {255, 255, 255, 0};
  const auto clear = [&](int y, int from, int to) {
    uint8_t* row = rgba + (static_cast<size_t>(y) * width + from) * 4;
    for (int x = from; x < to; x++, row += 4) std::memcpy(row, kClear, 4);
  };
  for (int y = 0; y < height; y++) {
    if (y < y0 || y >= y1 || x1 <= x0) {
      clear(y, 0, width);
      continue;
    }
    clear(y, 0, x0);
    clear(y, x1, width);
  }
}

}  // namespace axsnap
