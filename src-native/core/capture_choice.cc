#include "capture_choice.h"

#include <algorithm>
#include <cmath>

namespace axsnap {

namespace {

const char kEllipsis[] = "\xE2\x80\xA6";  // U+2026, as CoreGraphics cuts long titles

double Area(const Rect& r) { return r.w * r.h; }

bool SameFrame(const Rect& a, const Rect& b) {
  // AX and CG round differently; a couple of points is the same window.
  return std::fabs(a.x - b.x) <= 2 && std::fabs(a.y - b.y) <= 2 && std::fabs(a.w - b.w) <= 2 &&
         std::fabs(a.h - b.h) <= 2;
}

}  // namespace

bool TitleMatches(const std::string& cgTitle, const std::string& axTitle) {
  if (cgTitle.empty() || axTitle.empty()) return false;
  if (cgTitle == axTitle) return true;
  const size_t n = sizeof(kEllipsis) - 1;
  if (cgTitle.size() > n && cgTitle.compare(cgTitle.size() - n, n, kEllipsis) == 0) {
    std::string prefix = cgTitle.substr(0, cgTitle.size() - n);
    while (!prefix.empty() && prefix.back() == ' ') prefix.pop_back();
    return !prefix.empty() && axTitle.compare(0, prefix.size(), prefix) == 0;
  }
  return false;
}

std::optional<size_t> ChooseCaptureWindow(const std::vector<ScreenWindow>& frontToBack, int64_t pid,
                                          const std::string& title, const Rect* frame, std::string& why) {
  std::vector<size_t> mine, candidates;
  for (size_t i = 0; i < frontToBack.size(); i++) {
    const ScreenWindow& w = frontToBack[i];
    if (w.pid != pid || !w.onScreen || w.alpha <= 0 || w.bounds.w <= 0 || w.bounds.h <= 0) continue;
    mine.push_back(i);
    if (w.layer == 0 && Area(w.bounds) >= kMinCaptureArea) candidates.push_back(i);
  }
  if (mine.empty()) {
    why = "the app has no window on screen";
    return std::nullopt;
  }
  // The window whose bounds are the AX frame, at any layer and of any size:
  // an open menu (a pop-up menu layer), a popover or a panel is its own
  // window, and the tree describes it, not the document window behind it.
  auto framed = [&]() -> std::optional<size_t> {
    if (frame)
      for (size_t i : mine)
        if (SameFrame(frontToBack[i].bounds, *frame)) return i;
    return std::nullopt;
  };
  if (candidates.empty()) {
    if (std::optional<size_t> f = framed()) return f;
    size_t largest = mine.front();
    for (size_t i : mine)
      if (Area(frontToBack[i].bounds) > Area(frontToBack[largest].bounds)) largest = i;
    return largest;
  }

  std::optional<size_t> titled;
  for (size_t i : candidates) {
    if (!TitleMatches(frontToBack[i].title, title)) continue;
    // Two windows with one title: the frame decides, else the front one stays.
    if (!titled ||
        (frame && SameFrame(frontToBack[i].bounds, *frame) && !SameFrame(frontToBack[*titled].bounds, *frame)))
      titled = i;
  }
  const size_t front = candidates.front();
  if (titled) {
    // The frontmost candidate in front of it that lies within it: a sheet or
    // a dialog of this window, which the user sees first. A document window
    // beside it, or cascaded over it, is another window: the tree describes
    // this one.
    const Rect& t = frontToBack[*titled].bounds;
    const double slack = 2;  // AX and CG round differently
    for (size_t i : candidates) {
      if (i >= *titled) break;
      const Rect& o = frontToBack[i].bounds;
      if (o.x >= t.x - slack && o.y >= t.y - slack && o.x + o.w <= t.x + t.w + slack && o.y + o.h <= t.y + t.h + slack)
        return i;
    }
    return titled;
  }
  if (std::optional<size_t> f = framed()) return f;
  return front;
}

std::optional<uint32_t> MatchWindowNumber(const std::vector<ScreenWindow>& all, int64_t pid, const Rect& frame,
                                          const std::string& title, bool standard, const std::vector<uint32_t>& taken) {
  std::vector<const ScreenWindow*> framed;
  for (const ScreenWindow& w : all) {
    if (w.pid != pid || w.number == 0 || !SameFrame(w.bounds, frame)) continue;
    if (std::find(taken.begin(), taken.end(), w.number) != taken.end()) continue;
    framed.push_back(&w);
  }
  // Narrows `framed` to those `keep` accepts, unless that leaves none.
  auto narrow = [&](auto keep) {
    std::vector<const ScreenWindow*> kept;
    for (const ScreenWindow* w : framed)
      if (keep(*w)) kept.push_back(w);
    if (!kept.empty()) framed = std::move(kept);
  };
  if (framed.size() > 1) narrow([&](const ScreenWindow& w) { return (w.layer == 0) == standard; });
  if (framed.size() > 1) narrow([&](const ScreenWindow& w) { return TitleMatches(w.title, title); });
  if (framed.size() == 1) return framed.front()->number;
  return std::nullopt;
}

}  // namespace axsnap
