// MacBackend's life and settings: construction, and the teardown that
// removes the observers and turns AXEnhancedUserInterface off again; each
// worker job's autorelease pool and the observers' dispatch at its ends; the
// Accessibility trust check and the permissions report; the live-reads
// setting; settling; releasing handles. The jobs themselves are in the files
// named in mac_internal.h.
//
// Apple: AXIsProcessTrusted / AXIsProcessTrustedWithOptions
// (kAXTrustedCheckOptionPrompt) in HIServices' AXUIElement.h;
// NSAutoreleasePool semantics (objc_autoreleasePoolPush/Pop) behind MacSystem;
// the Screen Recording preflight and request in CGWindow.h
// (CGPreflightScreenCaptureAccess, CGRequestScreenCaptureAccess) behind MacSystem.

#include "mac_internal.h"

namespace axsnap {

MacBackend::MacBackend(std::unique_ptr<MacSystem> system) : system_(std::move(system)) {}

MacBackend::~MacBackend() {
  // Observers go first: their callbacks point at this backend.
  while (!watched_.empty()) Unwatch(watched_.begin()->first);
  // AXEnhancedUserInterface changes how the app animates and places its
  // windows: it is turned off again when this backend goes away.
  for (int64_t pid : enhanced_)
    if (AXUIElementRef app = AppElement(pid)) {
      AXUIElementSetMessagingTimeout(app, 0.5f);
      AXUIElementSetAttributeValue(app, CFSTR("AXEnhancedUserInterface"), kCFBooleanFalse);
    }
}

// One autorelease pool per worker job: the worker thread lives as long as the
// backend and has no pool of its own, so whatever AppKit, ScreenCaptureKit or
// CoreFoundation autoreleases inside a job would pile up until the thread
// ends. The pop holds the system by shared_ptr: the closing job destroys this
// backend before its pool is popped.
//
// The observers' notifications are dispatched at both ends of the job too
// (review 2, N10): otherwise they would wait in the observer's port for the
// next WaitEvents, however long the agent paused, and be counted as if they
// had just happened. The end step needs no backend: a backend the job
// destroyed removed its observers' sources, so that drain finds nothing.
std::function<void()> MacBackend::BeginJob() {
  std::shared_ptr<MacSystem> system = system_;
  void* pool = system->PushAutoreleasePool();
  DrainRunLoop();
  return [system, pool] {
    DrainRunLoop();
    system->PopAutoreleasePool(pool);
  };
}

Error MacBackend::Trusted() const {
  if (AXIsProcessTrusted()) return {};
  return {ErrorCode::kPermissionDenied,
          "this process is not trusted for Accessibility: turn on the app that runs it in System Settings > Privacy & "
          "Security > Accessibility"};
}

// Trust is checked by every ListApps (so a grant made later takes effect), not
// here: permissions() must work on a backend of a process that is not trusted.
Error MacBackend::Connect() {
  SystemWide();
  return {};
}

Error MacBackend::Permissions(PermissionStatus& out, bool prompt) {
  const void* keys[] = {kAXTrustedCheckOptionPrompt};
  const void* values[] = {prompt ? kCFBooleanTrue : kCFBooleanFalse};
  CFRef<CFDictionaryRef> options = CFRef<CFDictionaryRef>::Adopt(CFDictionaryCreate(
      kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks));
  out.accessibility = AXIsProcessTrustedWithOptions(options.get()) ? "granted" : "denied";
  // Without `prompt`, silent: the preflight only. The ScreenCaptureKit probe
  // may itself show the Screen Recording prompt, so it runs only when
  // prompting is allowed (README, macOS: which call may prompt).
  Access screen = system_->ScreenRecordingPreflight();
  if (screen != Access::kGranted && prompt) {
    screen = system_->ScreenRecordingProbe();
    if (screen != Access::kGranted) {
      system_->RequestScreenRecording();
      screen = system_->ScreenRecordingPreflight();
    }
  }
  out.screenRecording = screen == Access::kGranted ? "granted" : screen == Access::kDenied ? "denied" : "unknown";
  return {};
}

// Every read of this backend asks the app (the element table keeps
// references, not values); the one remembered value is the role ChildrenOf
// chooses its source by, which while live is served only from a read made
// while live.
void MacBackend::SetLiveReads(bool live) {
  live_ = live;
  liveRead_.clear();
}

void MacBackend::Settle(std::chrono::milliseconds ms) { system_->Sleep(ms); }

void MacBackend::Release(const std::vector<ElementId>& ids) {
  for (ElementId id : ids) {
    elements_.Release(id);
    liveRead_.erase(id);
  }
}

}  // namespace axsnap
