#include "gio_launch.h"

#include <gio/gdesktopappinfo.h>  // gio-unix-2.0

#include <set>
#include <string>

#include "glib_ref.h"

namespace axsnap {

namespace {

using glib::AdoptObject;
using glib::CharPtr;
using glib::ErrorPtr;
using glib::GObj;

struct AppInfoListFree {
  void operator()(GList* l) const { g_list_free_full(l, g_object_unref); }
};
using AppInfoList = std::unique_ptr<GList, AppInfoListFree>;

struct StrvFree {
  void operator()(gchar** v) const { g_strfreev(v); }
};
using Strv = std::unique_ptr<gchar*, StrvFree>;

struct UriListFree {
  void operator()(GList* l) const { g_list_free_full(l, g_free); }
};
using UriList = std::unique_ptr<GList, UriListFree>;

std::string Str(const char* s) { return s ? s : ""; }

// An entry's %f/%F/%u/%U take URIs (GIO turns them back into paths for
// %f/%F): a URI stays one, anything else is a file named as on a command
// line (relative to the working directory). CheckArgs refused options first.
gchar* UriOf(const std::string& arg) {
  CharPtr scheme(g_uri_parse_scheme(arg.c_str()));
  if (scheme) return g_strdup(arg.c_str());
  GObj<GFile> file = AdoptObject(g_file_new_for_commandline_arg(arg.c_str()));
  return g_file_get_uri(file.get());
}

// The launch context's environment becomes exactly `env`: GIO starts from
// this process's environ, which a caller may have changed only in JS.
void SetEnvironment(GAppLaunchContext* ctx, const LaunchRequest& request) {
  if (!request.envGiven) return;
  std::set<std::string> keep;
  for (const auto& [k, v] : request.env) keep.insert(k);
  Strv current(g_app_launch_context_get_environment(ctx));
  for (gchar** e = current.get(); e && *e; e++) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    if (!keep.count(key)) g_app_launch_context_unsetenv(ctx, key.c_str());
  }
  for (const auto& [k, v] : request.env) g_app_launch_context_setenv(ctx, k.c_str(), v.c_str());
}

// How many files or URIs an Exec line takes: GIO spawns one process per
// argument when the line has no %F/%U (for %f/%u, or for no field code at
// all, where the arguments are dropped), so only these counts start the app
// once with every argument it was given.
enum class Takes { kNone, kOne, kMany };

Takes ExecTakes(GDesktopAppInfo* info) {
  CharPtr exec(g_desktop_app_info_get_string(info, "Exec"));
  if (!exec) return Takes::kNone;
  for (const char* c = exec.get(); *c; c++) {
    if (*c != '%' || !c[1]) continue;
    c++;
    if (*c == 'F' || *c == 'U') return Takes::kMany;
    if (*c == 'f' || *c == 'u') return Takes::kOne;
  }
  return Takes::kNone;
}

// Refuses args the entry cannot take as given (kInvalidArgument: nothing is
// started). An option is no file: GIO would make it file:///cwd/--flag.
Error CheckArgs(GDesktopAppInfo* info, const LaunchRequest& request) {
  if (request.args.empty()) return {};
  const Takes takes = ExecTakes(info);
  if (takes == Takes::kNone)
    return {ErrorCode::kInvalidArgument,
            request.id + " takes no files or URIs (its Exec line has no %f, %F, %u or %U), so it cannot be given args"};
  if (takes == Takes::kOne && request.args.size() > 1)
    return {ErrorCode::kInvalidArgument, request.id + " takes one file or URI (its Exec line has %f or %u), got " +
                                             std::to_string(request.args.size()) + " args"};
  for (const auto& arg : request.args) {
    CharPtr scheme(g_uri_parse_scheme(arg.c_str()));
    if (!scheme && !arg.empty() && arg[0] == '-')
      return {ErrorCode::kInvalidArgument,
              request.id + " takes files or URIs, and \"" + arg + "\" is an option, not a file"};
  }
  return {};
}

void OnLaunched(GDesktopAppInfo*, GPid pid, gpointer data) { *static_cast<int64_t*>(data) = pid; }

}  // namespace

Error GioLaunchable(std::vector<LaunchableApp>& out) {
  out.clear();
  AppInfoList all(g_app_info_get_all());
  for (GList* l = all.get(); l; l = l->next) {
    if (!G_IS_DESKTOP_APP_INFO(l->data)) continue;
    GAppInfo* info = G_APP_INFO(l->data);
    GDesktopAppInfo* desktop = G_DESKTOP_APP_INFO(l->data);
    LaunchableApp app;
    app.id = Str(g_app_info_get_id(info));
    if (app.id.empty()) continue;
    app.name = Str(g_app_info_get_name(info));
    app.executable = Str(g_app_info_get_executable(info));
    app.path = Str(g_desktop_app_info_get_filename(desktop));
    app.hidden = g_desktop_app_info_get_nodisplay(desktop);
    out.push_back(std::move(app));
  }
  return {};
}

Error GioLaunch(const LaunchRequest& request, int64_t& pid) {
  pid = 0;
  const bool isFile = request.id.find('/') != std::string::npos;
  GObj<GDesktopAppInfo> info = AdoptObject(isFile ? g_desktop_app_info_new_from_filename(request.id.c_str())
                                                  : g_desktop_app_info_new(request.id.c_str()));
  if (!info) return {ErrorCode::kAppNotFound, "no desktop entry " + request.id};
  if (Error refused = CheckArgs(info.get(), request)) return refused;
  GObj<GAppLaunchContext> ctx = AdoptObject(g_app_launch_context_new());
  SetEnvironment(ctx.get(), request);
  UriList uris(nullptr);
  for (auto it = request.args.rbegin(); it != request.args.rend(); ++it)
    uris.reset(g_list_prepend(uris.release(), UriOf(*it)));
  GError* raw = nullptr;
  // Without G_SPAWN_DO_NOT_REAP_CHILD GLib spawns through an intermediate
  // child: the app is nobody's child here (no zombie for Node to reap), and
  // the pid reported is the app's own. Its output goes to /dev/null: this
  // process's stdout may be a protocol (the MCP server's), and a descriptor
  // left closed would be taken by the next file the app opens.
  const GSpawnFlags flags =
      static_cast<GSpawnFlags>(G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL);
  const gboolean ok = g_desktop_app_info_launch_uris_as_manager(info.get(), uris.get(), ctx.get(), flags, nullptr,
                                                                nullptr, OnLaunched, &pid, &raw);
  ErrorPtr error(raw);
  if (!ok)
    return {ErrorCode::kActionFailed,
            "could not start " + request.id + ": " + (error ? Str(error->message) : std::string("unknown error"))};
  return {};
}

}  // namespace axsnap
