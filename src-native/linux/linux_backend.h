// The Linux backend: AT-SPI2 over D-Bus for the tree and semantic actions
// (AtspiBackend), X11 for the window's pixels and synthetic input
// (X11Display). Both are driven from the backend's worker thread; X11Display
// runs the X calls on a thread of its own so that a silent X server costs a
// call its deadline, never the worker.
//
// Apps with no accessibility tree (xterm, Tk, xmessage: X11 clients that
// never register with AT-SPI) are listed from X11 (x11_clients.h) beside the
// registry's apps, one app per pid, marked noTree. Each of their top-level
// windows is one element (an "x11" handle, path "/<xid>", in AT-SPI's handle
// table) with the window's title and frame and no children; pointer and key
// input reach it through the same observed-window checks as any window. With
// no accessibility bus at all but an X display, the X11 apps are all there is:
// connecting succeeds and listApps lists them.
#pragma once

#include <memory>
#include <set>

#include "../core/ocr.h"
#include "atspi_backend.h"
#include "x11_display.h"

namespace axsnap {

class LinuxBackend : public AtspiBackend {
 public:
  const char* Platform() const override { return "linux"; }
  double Scale(const WindowInfo&) override { return 1.0; }
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  // The AT-SPI windows; an untitled frame or dialog takes its X title.
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  // Desktop entries, through GIO (gio_launch.h).
  Error Launchable(std::vector<LaunchableApp>& out, Clock::time_point deadline) override;
  Error Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) override;
  // Tesseract (ocr_tesseract.h), loaded on first use and kept.
  Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                      OcrResult& out) override;
  Error OcrReady(const std::vector<std::string>& languages) override;

  // --- X11 apps with no accessibility tree (the rest goes to AtspiBackend) ---
  Error ConnectWithin(Clock::time_point deadline) override;
  // The registry's apps plus the X11 clients whose pid none of them has.
  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error AccessibilityMissing() const override { return atspiError_; }
  Error ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  int WindowByEarlierId(const AppInfo& app, const std::vector<WindowInfo>& windows, const std::string& id,
                        Clock::time_point deadline) override;
  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;
  Error ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                   Clock::time_point deadline) override;
  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  // An X11 app's keyboard focus is its window: key input is checked against X's focus there.
  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                       std::vector<ElementId>& chain, Clock::time_point deadline) override;
  void PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                   std::vector<std::string>& notes, bool& contentPending) override;
  Error Watch(const AppInfo& app, Clock::time_point deadline) override;
  Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) override;
  void Unwatch(int64_t pid) override;

 private:
  // The X window behind an "x11" handle; false for any other handle.
  bool XidOf(ElementId id, unsigned long& xid) const;
  bool IsX11App(const AppInfo& app) const;
  Error X11Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline);
  WindowInfo WindowOf(const X11Client& c);
  // Binds an "x11" window's handle to its xid before capture or input.
  void BindX11(const WindowInfo& window);

  X11Display x11_;
  bool atspiMissing_ = false;     // the last Connect found no accessibility bus, and an X display
  Error atspiError_;              // set while ListApps answered with the X11 apps alone
  std::set<int64_t> noTreePids_;  // the X11-only apps of the last listing (events: none)
  std::unique_ptr<OcrEngine> ocr_;
};

}  // namespace axsnap
