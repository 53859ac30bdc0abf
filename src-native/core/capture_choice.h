// Capture-window choice: which on-screen window of the platform's window list
// (macOS: CGWindowListCopyWindowInfo) holds the pixels of the accessibility
// window a snapshot describes. AX and CoreGraphics know windows separately;
// this matches them by owner, layer, size, title and frame.
//
// Rules (native-backends.md): windows of the app's pid, on screen, layer 0 and
// at least 20,000 pt² (else the app's largest on-screen window); the window
// whose title matches is preferred, unless a window in front of it lies within
// it (a sheet or dialog the user sees first); a CoreGraphics title
// cut with "…" matches as a prefix; an empty title matches nothing. Without a
// title match, the window whose bounds match the AX frame at any layer and
// of any size (a menu, a popover: review 2, N9), else the frontmost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "types.h"

namespace axsnap {

struct ScreenWindow {
  uint32_t number = 0;  // CGWindowID
  int64_t pid = 0;
  int layer = 0;
  Rect bounds;        // global top-left points
  std::string title;  // may be empty (no Screen Recording permission) or cut with "…"
  std::string owner;  // the owning process's name (kCGWindowOwnerName), for messages
  bool onScreen = true;
  double alpha = 1;  // fully transparent windows (alpha 0) show nothing
};

constexpr double kMinCaptureArea = 20000;  // pt²: smaller layer-0 windows are palettes and popovers

// True when a CoreGraphics title designates the AX title.
bool TitleMatches(const std::string& cgTitle, const std::string& axTitle);

// `frontToBack` as the platform lists it. Returns the index of the chosen
// window, or nullopt with `why` saying what was missing.
std::optional<size_t> ChooseCaptureWindow(const std::vector<ScreenWindow>& frontToBack, int64_t pid,
                                          const std::string& title, const Rect* frame, std::string& why);

// The window server's number for an AX window when the window server cannot
// be asked directly (macOS without _AXUIElementGetWindow): the one window of
// `pid` in `all` (every Space's, on screen or not) whose bounds are `frame`
// (within 2 pt), not one of `taken` (the numbers other windows of the same
// listing have). Several such windows are told apart by the layer (0 for a
// `standard` window, above it for a panel, menu or popover), then by the
// title when exactly one matches (tabs of one window share its frame); still
// several, or none: nullopt, since a guessed number would name another
// window to every process.
std::optional<uint32_t> MatchWindowNumber(const std::vector<ScreenWindow>& all, int64_t pid, const Rect& frame,
                                          const std::string& title, bool standard, const std::vector<uint32_t>& taken);

}  // namespace axsnap
