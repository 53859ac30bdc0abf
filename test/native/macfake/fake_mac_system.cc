// FakeMacSystem: the AppKit / ScreenCaptureKit half of the macOS backend,
// answered from the fake world. See fake_mac_system.h for the log lines.

#include "fake_mac_system.h"

#include <cmath>

#include "fake_cf.h"

namespace axsnap {

namespace {

using macfake::FakeApp;
using macfake::FakeWorld;
using macfake::Step;

// Runs one recovery step on the app `pid` and logs `line`.
Error SystemStep(int64_t pid, Step step, const std::string& line) {
  macfake::AppendLog(line);
  Error result;
  macfake::WithWorld([&](FakeWorld* w) {
    FakeApp* app = w ? w->App(pid) : nullptr;
    if (!app) {
      result = {ErrorCode::kAppNotFound, "no running app with pid " + std::to_string(pid)};
      return;
    }
    macfake::ApplyStep(*w, *app, step, 0);
  });
  return result;
}

// A capture larger than this is a bug in the caller (a frame in pixels, a
// scale applied twice), not a window.
constexpr double kMaxSide = 16384;

}  // namespace

Error FakeMacSystem::RunningApps(std::vector<RunningApp>& out) {
  out.clear();
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    for (const FakeApp& app : w->apps) {
      RunningApp r;
      r.pid = app.pid;
      r.name = app.name;
      r.bundleId = app.bundleId;
      r.bundlePath = app.bundlePath;
      r.regular = app.regular;
      r.hidden = app.hidden;
      r.active = app.active;
      out.push_back(std::move(r));
    }
  });
  return {};
}

Error FakeMacSystem::Unhide(int64_t pid) {
  return SystemStep(pid, Step::kUnhide, "system unhide " + std::to_string(pid));
}

Error FakeMacSystem::ActivateAllWindows(int64_t pid) {
  return SystemStep(pid, Step::kActivate, "system activate " + std::to_string(pid));
}

Error FakeMacSystem::OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point) {
  macfake::AppendLog("system open -b " + bundleId);
  Error result;
  macfake::WithWorld([&](FakeWorld* w) {
    FakeApp* app = nullptr;
    if (w && !bundleId.empty())
      for (FakeApp& a : w->apps)
        if (a.bundleId == bundleId) app = &a;
    if (!app) {
      // What `open -b` says for an unknown bundle, with its exit status 1.
      result = {ErrorCode::kAppNotFound, "open -b " + bundleId + ": Unable to find application with identifier"};
      return;
    }
    macfake::ApplyStep(*w, *app, Step::kOpen, 0);
  });
  return result;
}

double FakeMacSystem::BackingScale(const Rect&) {
  double scale = 2;
  macfake::WithWorld([&](FakeWorld* w) {
    if (w) scale = w->scale;
  });
  return scale;
}

Error FakeMacSystem::CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, std::vector<uint8_t>& rgba,
                                   int& width, int& height, std::chrono::steady_clock::time_point) {
  std::string why;
  macfake::WithWorld([&](FakeWorld* w) {
    const macfake::FakeCGWindow* cg = nullptr;
    if (w)
      for (const auto& c : w->windows)
        if (c.number == windowNumber) cg = &c;
    if (!w || !cg)
      why = "no window numbered " + std::to_string(windowNumber);
    else if (w->screenRecording != "granted")
      why = "Screen Recording is not granted";
    else if (w->captureFails || cg->captureFails)
      why = "scripted capture failure";
    else if (!cg->onScreen)
      why = "the window is not on screen";
  });
  const double pw = std::round(frame.w * scale), ph = std::round(frame.h * scale);
  if (why.empty() && (!(pw >= 1 && ph >= 1) || pw > kMaxSide || ph > kMaxSide))
    why = "bad capture size " + std::to_string(pw) + "x" + std::to_string(ph);
  const std::string head = "system capture " + std::to_string(windowNumber);
  if (!why.empty()) {
    macfake::AppendLog(head + " -> failed: " + why);
    return {ErrorCode::kCaptureFailed, why};
  }
  width = static_cast<int>(pw);
  height = static_cast<int>(ph);
  // A gradient, so an encoder or a crop that loses the image shows: red grows
  // to the right, green downwards, blue is the window number.
  rgba.assign(static_cast<size_t>(width) * static_cast<size_t>(height) * 4, 0);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = rgba.data() + static_cast<size_t>(y) * static_cast<size_t>(width) * 4;
    for (int x = 0; x < width; ++x) {
      row[x * 4 + 0] = static_cast<uint8_t>(width > 1 ? x * 255 / (width - 1) : 0);
      row[x * 4 + 1] = static_cast<uint8_t>(height > 1 ? y * 255 / (height - 1) : 0);
      row[x * 4 + 2] = static_cast<uint8_t>(windowNumber & 0xFF);
      row[x * 4 + 3] = 255;
    }
  }
  macfake::AppendLog(head + " " + std::to_string(width) + "x" + std::to_string(height));
  return {};
}

Access FakeMacSystem::ScreenRecordingAccess() {
  Access access = Access::kGranted;
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    if (w->screenRecording == "denied")
      access = Access::kDenied;
    else if (w->screenRecording == "unknown")
      access = Access::kUnknown;
  });
  return access;
}

void FakeMacSystem::RequestScreenRecording() { macfake::AppendLog("system request screen recording"); }

void FakeMacSystem::Sleep(std::chrono::milliseconds ms) {
  // Recorded, not slept: tests check the settle time without waiting for it.
  macfake::AppendLog("system sleep " + std::to_string(ms.count()));
}

std::unique_ptr<MacSystem> CreateFakeMacSystem() { return std::make_unique<FakeMacSystem>(); }

}  // namespace axsnap
