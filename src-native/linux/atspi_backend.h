// The AT-SPI half of the Linux backend: the accessibility tree over D-Bus.
//
// Talks to the accessibility bus with GDBus (gio) directly; libatspi is not
// used (it aborts the process when no bus is reachable, keeps its own caches
// and runs on the default main context). The D-Bus API is the one in
// at-spi2-core's xml/ directory; constants come from atspi-constants.h.
//
// Everything runs on the calling thread (the backend's worker): replies are
// dispatched on a private GMainContext that is iterated only inside an
// operation, so no callback ever runs on another thread or between calls.
//
// Screenshots and synthetic input are not AT-SPI: Capture/Pointer/Keys/
// TypeText return kInternal here. LinuxBackend composes this class with the
// X11 layer (x11_display.h) and overrides them.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "../core/backend.h"

namespace axsnap {

class AtspiBackend : public Backend {
 public:
  AtspiBackend();
  ~AtspiBackend() override;
  AtspiBackend(const AtspiBackend&) = delete;
  AtspiBackend& operator=(const AtspiBackend&) = delete;

  const char* Platform() const override { return "linux"; }

  // Session bus (DBUS_SESSION_BUS_ADDRESS) -> org.a11y.Bus.GetAddress (or
  // AT_SPI_BUS_ADDRESS) -> a private connection to the accessibility bus.
  // Also sets org.a11y.Status.IsEnabled so Chromium and Qt expose their trees.
  // Calling it again reconnects. Never aborts.
  Error Connect() override;

  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;

  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;

  double Scale(const WindowInfo& window) override;

  // Not AT-SPI: kInternal. The X11 layer provides these in LinuxBackend.
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                Rect& captured) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev) override;
  Error Keys(const WindowInfo& window, const std::string& combo) override;
  Error TypeText(const WindowInfo& window, const std::string& text) override;

  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;

  void Release(const std::vector<ElementId>& ids) override;

  // --- Beyond the Backend interface (LinuxBackend, tests) ---

  bool Connected() const;
  // Upper bound of one D-Bus call (default 800 ms); each call also stops at
  // the operation's deadline.
  void SetCallTimeout(std::chrono::milliseconds timeout);
  // Bulk reads: one org.a11y.atspi.Cache.GetItems call per app supplies
  // role, name, description, states and interfaces for the nodes it lists;
  // the rest is read live. Off by default (see the .cc for why).
  void SetUseBulkCache(bool on);
  // Forget bulk data read earlier (after synthetic input, for instance).
  void InvalidateBulkCache();
  // The D-Bus address of an element (for diagnostics); false for unknown ids.
  bool Describe(ElementId id, std::string& busName, std::string& objectPath) const;
  // Number of live handles.
  size_t HandleCount() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace axsnap
