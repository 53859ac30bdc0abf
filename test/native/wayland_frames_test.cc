// Unit tests of the Wayland placement rule (src-native/linux/wayland_frames.h),
// built and run by test/linux/wayland-frames-rule.test.ts. Exit status 0 = all passed.
#include <cstdio>

#include "../../src-native/linux/wayland_frames.h"

using axsnap::PlaceWaylandWindow;
using axsnap::Rect;

static int failures = 0;
static void Check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL %s\n", what);
    failures++;
  }
}

int main() {
  // GTK3 gtk3-widget-factory under gnome-shell (research §3): AT-SPI 1467x784 = the buffer.
  const Rect gtk3Frame{0, 32, 1415, 732}, gtk3Buffer{-26, 9, 1467, 784};
  auto p = PlaceWaylandWindow(1467, 784, gtk3Frame, gtk3Buffer);
  Check(!p.fromFrame && p.sizeMatched && p.origin.x == -26 && p.origin.y == 9, "gtk3 uses the buffer origin");
  Rect entry = axsnap::WindowToScreen(Rect{36, 256, 326, 34}, p);
  Check(entry.x == 10 && entry.y == 265 && entry.w == 326 && entry.h == 34, "gtk3 entry in screen space");
  // GTK4 4.8: AT-SPI 1286x768 = the frame.
  const Rect gtk4Frame{0, 32, 1286, 768}, gtk4Buffer{-14, 20, 1314, 797};
  p = PlaceWaylandWindow(1286, 768, gtk4Frame, gtk4Buffer);
  Check(p.fromFrame && p.sizeMatched && p.origin.x == 0 && p.origin.y == 32, "gtk4 uses the frame origin");
  // Chromium: AT-SPI 1050x780 = the buffer.
  p = PlaceWaylandWindow(1050, 780, Rect{50, 32, 1018, 738}, Rect{34, 22, 1050, 780});
  Check(!p.fromFrame && p.sizeMatched && p.origin.x == 34, "chromium uses the buffer origin");
  // No shadow: frame and buffer are one rectangle; either origin is the same point.
  p = PlaceWaylandWindow(400, 300, Rect{10, 40, 400, 300}, Rect{10, 40, 400, 300});
  Check(p.sizeMatched && p.origin.x == 10 && p.origin.y == 40, "frame = buffer");
  // Neither size matches (a resize between the two reads): the buffer, flagged as unmatched.
  p = PlaceWaylandWindow(500, 500, gtk3Frame, gtk3Buffer);
  Check(!p.fromFrame && !p.sizeMatched && p.origin.x == -26, "no size matches: buffer, unmatched");
  // Half a pixel of rounding is the same size.
  p = PlaceWaylandWindow(1286.4, 767.6, gtk4Frame, gtk4Buffer);
  Check(p.fromFrame, "sizes within half a pixel match");
  // Hidden widgets keep their sentinel; a point maps back to the window.
  Rect hidden = axsnap::WindowToScreen(Rect{axsnap::kHiddenCoordinate, axsnap::kHiddenCoordinate, 1, 1}, p);
  Check(hidden.x == axsnap::kHiddenCoordinate && hidden.y == axsnap::kHiddenCoordinate, "hidden stays hidden");
  double x = 100, y = 132;
  axsnap::ScreenToWindow(x, y, p);
  Check(x == 100 && y == 100, "screen point back to window coordinates");
  if (failures == 0) std::printf("ok\n");
  // A capture's shadow margin (outside the frame) is cleared to transparent white; the frame's pixels stay.
  {
    uint8_t px[6 * 4 * 4];
    for (int i = 0; i < 6 * 4 * 4; i++) px[i] = 7;
    axsnap::ClearOutsideFrame(px, 6, 4, Rect{100, 200, 6, 4}, Rect{102, 201, 3, 2});
    int kept = 0, cleared = 0;
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 6; x++) {
        const uint8_t* p = px + (y * 6 + x) * 4;
        const bool in = x >= 2 && x < 5 && y >= 1 && y < 3;
        if (in && p[0] == 7 && p[3] == 7) kept++;
        if (!in && p[0] == 255 && p[1] == 255 && p[2] == 255 && p[3] == 0) cleared++;
      }
    Check(kept == 6 && cleared == 18, "the shadow margin is cleared, the frame kept");
    // A frame wholly outside the capture clears it all.
    axsnap::ClearOutsideFrame(px, 6, 4, Rect{100, 200, 6, 4}, Rect{0, 0, 10, 10});
    Check(px[(1 * 6 + 2) * 4 + 3] == 0, "a frame outside the capture clears all");
  }
  return failures == 0 ? 0 : 1;
}
