// GNOME Shell's window facts through org.gnome.Shell.Eval (shell_windows.h).
// The scripts use Mutter's MetaDisplay/MetaWindow JS API as gnome-shell 43
// exposes it (global.display.sort_windows_by_stacking, MetaWindow's
// get_frame_rect, get_buffer_rect, get_pid, get_id, activate) and
// Main.modalCount. Each returns a flat array of numbers, so the reply is read
// without a JSON library.
#include "shell_windows.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace axsnap {
namespace {

// A JS string literal for `s`.
std::string JsString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "[1,2.5,-3]" -> numbers; false for anything else.
bool Numbers(const std::string& json, std::vector<double>& out) {
  out.clear();
  size_t i = json.find('[');
  if (i == std::string::npos) return false;
  const char* p = json.c_str() + i + 1;
  for (;;) {
    while (*p == ' ') p++;
    if (*p == ']') return true;
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return false;
    out.push_back(v);
    p = end;
    while (*p == ' ') p++;
    if (*p == ',') p++;
  }
}

constexpr char kStack[] =
    "const d = global.display;"
    "const ws = d.sort_windows_by_stacking(global.get_window_actors().map(a => a.meta_window))"
    "  .filter(w => !w.minimized && !w.is_hidden());";

}  // namespace

Error FindCompositorWindow(MutterSession& s, int64_t pid, const std::string& title, double w, double h,
                           CompositorWindow& out, Clock::time_point deadline) {
  out = CompositorWindow{};
  const std::string js = std::string("(() => {") + kStack + "const pid = " + std::to_string(pid) +
                         ", title = " + JsString(title) + ", w = " + Num(w) + ", h = " + Num(h) + ";" +
                         "const sized = r => !w || (r.width === w && r.height === h);"
                         "let best = null;"
                         "for (const x of ws) {"
                         "  if (x.get_pid() !== pid || (title && x.get_title() !== title)) continue;"
                         "  if (!sized(x.get_buffer_rect()) && !sized(x.get_frame_rect())) continue;"
                         "  best = x; }"
                         "if (!best) return [];"
                         "const f = best.get_frame_rect(), b = best.get_buffer_rect();"
                         "return [best.get_id(), f.x, f.y, f.width, f.height, b.x, b.y, b.width, b.height,"
                         "  best === d.get_focus_window() ? 1 : 0, ws[ws.length - 1] === best ? 1 : 0,"
                         "  imports.ui.main.modalCount];"
                         "})()";
  std::string json;
  if (Error e = s.Eval(js, json, deadline)) return e;
  std::vector<double> v;
  if (!Numbers(json, v)) return {ErrorCode::kInternal, "GNOME Shell answered the window query with " + json};
  if (v.empty())
    return {ErrorCode::kWindowNotFound, "GNOME Shell shows no window of pid " + std::to_string(pid) +
                                            (title.empty() ? std::string() : " titled \"" + title + "\"") +
                                            " of the accessibility layer's size"};
  if (v.size() < 12) return {ErrorCode::kInternal, "GNOME Shell answered the window query with " + json};
  out.id = static_cast<uint64_t>(v[0]);
  out.frame = Rect{v[1], v[2], v[3], v[4]};
  out.buffer = Rect{v[5], v[6], v[7], v[8]};
  out.focused = v[9] != 0;
  out.topmost = v[10] != 0;
  out.modal = static_cast<int>(v[11]);
  // GTK4 reports its frame's size, GTK3 and Chromium their buffer's (shadow included).
  const bool frameSized = w > 0 && out.frame.w == w && out.frame.h == h && !(out.buffer.w == w && out.buffer.h == h);
  out.originX = frameSized ? out.frame.x : out.buffer.x;
  out.originY = frameSized ? out.frame.y : out.buffer.y;
  return {};
}

Error CompositorWindowAt(MutterSession& s, double x, double y, uint64_t& id, int& modal, Clock::time_point deadline) {
  id = 0;
  modal = 0;
  const std::string js = std::string("(() => {") + kStack + "const x = " + Num(x) + ", y = " + Num(y) + ";" +
                         "let hit = 0;"
                         "for (let i = ws.length - 1; i >= 0; i--) {"
                         "  const r = ws[i].get_frame_rect();"
                         "  if (x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height) {"
                         "    hit = ws[i].get_id(); break; } }"
                         "return [hit, imports.ui.main.modalCount];"
                         "})()";
  std::string json;
  if (Error e = s.Eval(js, json, deadline)) return e;
  std::vector<double> v;
  if (!Numbers(json, v) || v.size() < 2)
    return {ErrorCode::kInternal, "GNOME Shell answered the hit test with " + json};
  id = static_cast<uint64_t>(v[0]);
  modal = static_cast<int>(v[1]);
  return {};
}

Error ActivateCompositorWindow(MutterSession& s, uint64_t id, Clock::time_point deadline) {
  const std::string js =
      "(() => { const w = global.get_window_actors().map(a => a.meta_window)"
      ".find(w => w.get_id() === " +
      std::to_string(id) + "); if (!w) return [0]; w.activate(global.get_current_time()); return [1]; })()";
  std::string json;
  if (Error e = s.Eval(js, json, deadline)) return e;
  std::vector<double> v;
  if (!Numbers(json, v) || v.empty() || v[0] == 0)
    return {ErrorCode::kWindowNotFound, "the window is gone from GNOME Shell"};
  return {};
}

}  // namespace axsnap
