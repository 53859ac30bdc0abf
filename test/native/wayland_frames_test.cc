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
  return failures == 0 ? 0 : 1;
}
