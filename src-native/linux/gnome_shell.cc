// GNOME Shell's Eval for windows, frames, stacking, focus and raising
// (gnome_shell.h). Follows gnome-shell's org.gnome.Shell interface
// (data/dbus-interfaces/org.gnome.Shell.xml: Eval(s) -> (b, s), the string
// being the JSON of the script's value) and mutter's MetaWindow/MetaDisplay
// API as gnome-shell 43 exposes it to its JavaScript.

#include "gnome_shell.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "glib_wait.h"

namespace axsnap {

using glib::AdoptObject;
using glib::AdoptVariant;
using glib::ErrorPtr;
using glib::GObj;
using glib::VariantPtr;

namespace {

// One line per window, bottom to top: numbers, then the title and WM class
// percent-encoded, so the JSON string Eval returns holds no quote, backslash
// or separator to unescape.
constexpr char kListScript[] =
    "(() => { const d = global.display; const f = d.get_focus_window();"
    " const ws = d.sort_windows_by_stacking(global.get_window_actors().map(a => a.meta_window));"
    " return ws.map((w, i) => { const r = w.get_frame_rect(), b = w.get_buffer_rect();"
    " return [w.get_id(), i, w.get_pid(), w.get_client_type(), w === f ? 1 : 0, w.is_hidden() ? 1 : 0,"
    " w.minimized ? 1 : 0, r.x, r.y, r.width, r.height, b.x, b.y, b.width, b.height,"
    " w.get_window_type(), w.get_transient_for() ? w.get_transient_for().get_id() : 0,"
    " encodeURIComponent(w.get_title() || ''), encodeURIComponent(w.get_wm_class() || '')].join(','); }).join(';'); "
    "})()";

// The hit test looks at frames (the shadow around a buffer takes no input) of shown windows, top down.
constexpr char kInputScript[] =
    "(() => { const d = global.display; const f = d.get_focus_window();"
    " const ws = d.sort_windows_by_stacking(global.get_window_actors().map(a => a.meta_window))"
    ".filter(w => !w.minimized && !w.is_hidden());"
    " const x = X_, y = Y_; let hit = 0;"
    " for (let i = ws.length - 1; i >= 0; i--) { const r = ws[i].get_frame_rect();"
    " if (x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height) { hit = ws[i].get_id(); break; } }"
    // What takes a press at the point: the topmost reactive actor; shell UI (its top bar, a notification)
    // when no window actor holds it. A shell window's frame test alone would send a click to the top bar.
    " const Meta = imports.gi.Meta; let ui = 0;"
    " const a = global.stage.get_actor_at_pos(imports.gi.Clutter.PickMode.REACTIVE, Math.floor(x), Math.floor(y));"
    " if (a && a !== global.stage) { ui = 1; for (let p = a; p; p = p.get_parent())"
    " if (p instanceof Meta.WindowActor || p === global.window_group) { ui = 0; break; } }"
    " return [hit, f ? f.get_id() : 0, imports.ui.main.modalCount, ui].join(','); })()";

std::string JsNumber(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

constexpr char kRefusedStatus[] =
    "GNOME Shell refuses Eval (it is not in unsafe mode, as on a user's own session): screen positions of "
    "windows and elements are unknown";

int64_t MsLeft(Clock::time_point deadline) {
  return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

bool Number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

std::string GErrorWords(GError* e) { return e && e->message ? e->message : "unknown error"; }

}  // namespace

bool WaylandSession() {
  const char* type = std::getenv("XDG_SESSION_TYPE");
  if (type && *type) return std::strcmp(type, "wayland") == 0;
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  const char* x = std::getenv("DISPLAY");
  return wl && *wl && !(x && *x);
}

std::string WaylandCompositorWords() {
  const char* sway = std::getenv("SWAYSOCK");
  if (sway && *sway) return "sway (a wlroots compositor)";
  const char* kde = std::getenv("KDE_FULL_SESSION");
  const char* cur = std::getenv("XDG_CURRENT_DESKTOP");
  const std::string desktops = cur ? std::string(":") + cur + ":" : "";
  auto named = [&](const char* name) { return desktops.find(std::string(":") + name + ":") != std::string::npos; };
  if ((kde && std::strcmp(kde, "true") == 0) || named("KDE")) return "KDE Plasma's KWin";
  if (named("sway")) return "sway (a wlroots compositor)";
  if (named("GNOME")) return "GNOME's compositor, whose Mutter is not on this session bus,";
  return "this compositor";
}

bool ParseShellWindows(const std::string& json, std::vector<ShellWindow>& out) {
  out.clear();
  if (json.size() < 2 || json.front() != '"' || json.back() != '"') return false;
  const std::string body = json.substr(1, json.size() - 2);
  if (body.empty()) return true;
  for (const std::string& line : Split(body, ';')) {
    const std::vector<std::string> f = Split(line, ',');
    if (f.size() != 19) return false;
    double n[17];
    for (int i = 0; i < 17; i++)
      if (!Number(f[i], n[i])) return false;
    ShellWindow w;
    w.id = static_cast<uint64_t>(n[0]);
    w.stack = static_cast<int>(n[1]);
    w.pid = static_cast<int64_t>(n[2]);
    w.clientType = static_cast<int>(n[3]);
    w.focus = n[4] != 0;
    w.hidden = n[5] != 0;
    w.minimized = n[6] != 0;
    w.frame = Rect{n[7], n[8], n[9], n[10]};
    w.buffer = Rect{n[11], n[12], n[13], n[14]};
    w.type = static_cast<int>(n[15]);
    w.transientFor = static_cast<uint64_t>(n[16]);
    w.title = PercentDecode(f[17]);
    w.wmClass = PercentDecode(f[18]);
    out.push_back(std::move(w));
  }
  return true;
}

Error GnomeShell::Open(Clock::time_point deadline) {
  present_ = false;
  evalAllowed_ = false;
  bus_.reset();
  const char* address = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  if (!address || !*address) {
    status_ = "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset): the compositor cannot be asked";
    return {};
  }
  // A private context and connection: the shell's answers never wait on another thread's loop.
  glib::ContextPtr ctx(g_main_context_new());
  glib::ContextScope scope(ctx.get());
  const auto flags = static_cast<GDBusConnectionFlags>(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION);
  glib::Connected c = glib::ConnectAddress(ctx.get(), address, flags,
                                           std::chrono::milliseconds(std::max<int64_t>(MsLeft(deadline), 0)));
  if (c.timedOut) {
    status_ = "the D-Bus session bus did not answer in time: the compositor was not asked";
    return {ErrorCode::kTimeout, status_};
  }
  if (!c.conn) {
    status_ = "cannot connect to the D-Bus session bus: " + GErrorWords(c.error.get());
    return {};
  }
  bus_ = std::move(c.conn);

  GError* raw = nullptr;
  const int timeout = static_cast<int>(std::min<int64_t>(MsLeft(deadline), 2000));
  VariantPtr owned =
      AdoptVariant(timeout <= 0 ? nullptr
                                : g_dbus_connection_call_sync(
                                      bus_.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus", "NameHasOwner", g_variant_new("(s)", "org.gnome.Shell"),
                                      G_VARIANT_TYPE("(b)"), G_DBUS_CALL_FLAGS_NONE, timeout, nullptr, &raw));
  ErrorPtr err(raw);
  gboolean has = FALSE;
  if (owned) g_variant_get(owned.get(), "(b)", &has);
  if (!has) {
    status_ = owned ? "no GNOME Shell on the session bus (org.gnome.Shell has no owner): window positions are unknown"
                    : "the session bus did not say whether GNOME Shell runs: window positions are unknown";
    return {};
  }
  present_ = true;
  std::string result;
  Error e = Eval("1", result, deadline);
  if (!e) {
    evalAllowed_ = true;
    status_ = "GNOME Shell answers Eval (unsafe mode): windows, frames, stacking and focus come from the compositor";
  } else if (e.code == ErrorCode::kPermissionDenied) {
    status_ = kRefusedStatus;
  } else {
    status_ = "GNOME Shell did not answer Eval: " + e.message;
  }
  return {};
}

Error GnomeShell::Eval(const std::string& script, std::string& result, Clock::time_point deadline) {
  if (!bus_) return {ErrorCode::kActionNotSupported, "not connected to the session bus"};
  const int timeout = static_cast<int>(MsLeft(deadline));
  if (timeout <= 0) return {ErrorCode::kTimeout, "the deadline passed before asking GNOME Shell"};
  GError* raw = nullptr;
  VariantPtr reply = AdoptVariant(g_dbus_connection_call_sync(
      bus_.get(), "org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "Eval",
      g_variant_new("(s)", script.c_str()), G_VARIANT_TYPE("(bs)"), G_DBUS_CALL_FLAGS_NONE, timeout, nullptr, &raw));
  ErrorPtr err(raw);
  if (!reply) {
    if (err && g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
      return {ErrorCode::kTimeout, "GNOME Shell did not answer Eval within " + std::to_string(timeout) + " ms"};
    return {ErrorCode::kActionFailed, "GNOME Shell Eval failed: " + GErrorWords(err.get())};
  }
  gboolean ok = FALSE;
  const gchar* text = nullptr;
  g_variant_get(reply.get(), "(b&s)", &ok, &text);
  result = text ? text : "";
  // Outside unsafe mode the shell answers (false, "") to every script. A shell that allowed Eval at the
  // connect may leave unsafe mode (or be replaced by one not in it): from then on this says so.
  if (!ok && result.empty()) {
    if (evalAllowed_) {
      evalAllowed_ = false;
      status_ = kRefusedStatus;
    }
    return {ErrorCode::kPermissionDenied, "GNOME Shell refuses Eval (not in unsafe mode)"};
  }
  if (!ok) return {ErrorCode::kActionFailed, "GNOME Shell Eval raised: " + result};
  return {};
}

Error GnomeShell::Windows(std::vector<ShellWindow>& out, Clock::time_point deadline) {
  out.clear();
  if (!evalAllowed_) return {ErrorCode::kPermissionDenied, status_};
  std::string json;
  if (Error e = Eval(kListScript, json, deadline)) return e;
  if (!ParseShellWindows(json, out)) return {ErrorCode::kInternal, "GNOME Shell's window list was malformed: " + json};
  return {};
}

Error GnomeShell::Activate(uint64_t id, Clock::time_point deadline) {
  if (!evalAllowed_) return {ErrorCode::kPermissionDenied, status_};
  const std::string sid = std::to_string(id);
  std::string answer;
  if (Error e = Eval("(() => { const w = global.get_window_actors().map(a => a.meta_window).find(w => w.get_id() === " +
                         sid + "); if (!w) return 'gone'; w.activate(global.get_current_time()); return 'ok'; })()",
                     answer, deadline))
    return e;
  if (answer != "\"ok\"") return {ErrorCode::kElementGone, "the window " + sid + " is gone"};
  // Activation is asynchronous for the client (focus-in, restacking): confirm it from the shell's view.
  for (;;) {
    std::vector<ShellWindow> ws;
    if (Error e = Windows(ws, deadline)) return e;
    auto it = std::find_if(ws.begin(), ws.end(), [&](const ShellWindow& w) { return w.id == id; });
    if (it == ws.end()) return {ErrorCode::kElementGone, "the window " + sid + " closed while being raised"};
    bool onTop = true;
    for (const ShellWindow& w : ws)
      if (w.stack > it->stack && !w.hidden && !w.minimized && Intersects(w.frame, it->frame) &&
          !MenuOfWindow(ws, w.id, it->id))  // its own open menus stay above it
        onTop = false;
    if (it->focus && onTop) return {};
    if (MsLeft(deadline) <= 20)
      return {ErrorCode::kInputFailed, "GNOME Shell did not raise and focus the window " + sid + " in time"};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Error GnomeShell::InputState(double x, double y, ShellInputState& out, Clock::time_point deadline) {
  out = ShellInputState{};
  if (!evalAllowed_) return {ErrorCode::kPermissionDenied, status_};
  std::string script = kInputScript;
  script.replace(script.find("X_"), 2, JsNumber(x));
  script.replace(script.find("Y_"), 2, JsNumber(y));
  std::string json;
  if (Error e = Eval(script, json, deadline)) return e;
  std::vector<std::string> f;
  if (json.size() >= 2 && json.front() == '"' && json.back() == '"') f = Split(json.substr(1, json.size() - 2), ',');
  double n[4];
  if (f.size() != 4 || !Number(f[0], n[0]) || !Number(f[1], n[1]) || !Number(f[2], n[2]) || !Number(f[3], n[3]))
    return {ErrorCode::kInternal, "GNOME Shell's answer to the input check was malformed: " + json};
  out.atPoint = static_cast<uint64_t>(n[0]);
  out.focused = static_cast<uint64_t>(n[1]);
  out.modal = static_cast<int>(n[2]);
  out.shellUi = n[3] != 0;
  return {};
}

}  // namespace axsnap
