// A remote-desktop session on GNOME's compositor (Mutter's D-Bus APIs
// org.gnome.Mutter.RemoteDesktop and org.gnome.Mutter.ScreenCast, see
// mutter's data/dbus-interfaces/*.xml): one private session-bus connection,
// one RemoteDesktop session with a linked ScreenCast session that records
// the monitor, and its PipeWire node. The monitor stream is the coordinate
// space of absolute pointer motion and the source of screenshots.
//
// Mutter closes a session when the connection that made it drops, so the
// connection is kept for the backend's life. The session is made on first
// use and made again when the compositor restarted (the owner of
// org.gnome.Mutter.RemoteDesktop changed), when mutter closed it, or when the
// connection closed. Every call is bounded by its deadline: a stalled
// compositor costs the deadline, never a hang (the calls are asynchronous,
// waited for on this object's own main context).
//
// Where windows are, their stacking and focus come from GNOME Shell
// (gnome_shell.h), never from here: mutter has no window API on D-Bus.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "../core/types.h"
#include "glib_ref.h"

namespace axsnap {

using Clock = std::chrono::steady_clock;

class MutterSession {
 public:
  // What the session's stream records: the first monitor (screen space), or the window that has keyboard
  // focus when the stream is made (RecordWindow without a window-id: mutter picks the focused window then and
  // keeps recording that one). A window stream's space is the window's buffer, shadow included, whatever its
  // place on screen: pointer motion on it needs no screen position (a user's own GNOME session, where the
  // shell says nothing about windows).
  enum class Source { kMonitor, kFocusedWindow };
  explicit MutterSession(Source source = Source::kMonitor);
  ~MutterSession();
  MutterSession(const MutterSession&) = delete;
  MutterSession& operator=(const MutterSession&) = delete;

  // A Wayland session (WAYLAND_DISPLAY or XDG_SESSION_TYPE=wayland) whose
  // session bus has org.gnome.Mutter.RemoteDesktop and .ScreenCast. Bounded.
  bool Available(Clock::time_point deadline);
  // The session started, with its monitor stream's PipeWire node; made or
  // made again as said above: kTimeout when the compositor does not answer,
  // kActionNotSupported without Mutter, kActionFailed when it refuses.
  Error Ensure(Clock::time_point deadline);
  // Forgets the session (and the connection when `closeConnection`): mutter
  // closes what it had when the connection goes.
  void Drop(bool closeConnection);

  uint32_t NodeId() const { return nodeId_; }
  // The monitor stream's place on the screen (its Parameters), in logical pixels. A window stream has no
  // position: (0,0) and the stream's size.
  const Rect& Monitor() const { return monitor_; }
  const std::string& StreamPath() const { return streamPath_; }
  // Counts the sessions made (a new one after a compositor restart). Each starts with a Shift tap: Chromium
  // drops the first key of a new input session.
  int Generation() const { return generation_; }

  // A Shift tap (a monitor session does it when made): Chromium drops the first key of a new input session.
  void TapShift(Clock::time_point deadline);
  // org.gnome.Mutter.RemoteDesktop.Session.<method>(args) on the live session. `sent` becomes true when the
  // call left (a timeout after that is delivery uncertain).
  Error Notify(const char* method, GVariant* args, Clock::time_point deadline, bool& sent);
  // A bounded method call on this object's connection (an empty reply type takes any reply).
  glib::VariantPtr Call(const char* dest, const char* path, const char* iface, const char* method, GVariant* args,
                        const char* replyType, Clock::time_point deadline, Error& err);

 private:
  Error Connect(Clock::time_point deadline);
  Error Start(Clock::time_point deadline);
  std::string OwnerOf(const char* name, Clock::time_point deadline, Error& err);

  Source source_;
  glib::ContextPtr ctx_;
  glib::GObj<GDBusConnection> conn_;
  std::string owner_;  // the unique name that owned org.gnome.Mutter.RemoteDesktop when the session was made
  std::string rdPath_, scPath_, streamPath_;
  uint32_t nodeId_ = 0;
  Rect monitor_;
  // Mutter sent Closed on the session; shared with the signal's callback, one flag per session.
  std::shared_ptr<bool> closed_ = std::make_shared<bool>(false);
  guint closedSub_ = 0;
  int generation_ = 0;
};

}  // namespace axsnap
