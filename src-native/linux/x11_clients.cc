// X11 client windows and their pids; see x11_clients.h for the documents.
#include "x11_clients.h"

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <dlfcn.h>
#include <unistd.h>

#include "proc_files.h"

namespace axsnap {
namespace {

// X-Resource 1.2's client-id types (X11/extensions/XRes.h), declared here so
// that building needs no libxres-dev: the wire protocol fixes them.
struct XResClientIdSpecAbi {
  XID client;
  unsigned int mask;
};
struct XResClientIdValueAbi {
  XResClientIdSpecAbi spec;
  long length;
  void* value;
};
constexpr unsigned int kClientIdPidMask = 1u << 1;  // XRES_CLIENT_ID_PID_MASK
constexpr int kClientIdPid = 1;                     // XRES_CLIENT_ID_PID

struct XResApi {
  Bool (*queryExtension)(Display*, int*, int*) = nullptr;
  Status (*queryVersion)(Display*, int*, int*) = nullptr;
  Status (*queryClientIds)(Display*, long, XResClientIdSpecAbi*, long*, XResClientIdValueAbi**) = nullptr;
  int (*idType)(XResClientIdValueAbi*) = nullptr;
  pid_t (*clientPid)(XResClientIdValueAbi*) = nullptr;
  void (*idsDestroy)(long, XResClientIdValueAbi*) = nullptr;
  bool ok = false;
};

// Loaded once per process and never unloaded (other threads' connections may use it).
const XResApi& LoadXRes() {
  static const XResApi api = [] {
    XResApi a;
    void* lib = dlopen("libXRes.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    a.queryExtension = reinterpret_cast<decltype(a.queryExtension)>(dlsym(lib, "XResQueryExtension"));
    a.queryVersion = reinterpret_cast<decltype(a.queryVersion)>(dlsym(lib, "XResQueryVersion"));
    a.queryClientIds = reinterpret_cast<decltype(a.queryClientIds)>(dlsym(lib, "XResQueryClientIds"));
    a.idType = reinterpret_cast<decltype(a.idType)>(dlsym(lib, "XResGetClientIdType"));
    a.clientPid = reinterpret_cast<decltype(a.clientPid)>(dlsym(lib, "XResGetClientPid"));
    a.idsDestroy = reinterpret_cast<decltype(a.idsDestroy)>(dlsym(lib, "XResClientIdsDestroy"));
    a.ok = a.queryExtension && a.queryVersion && a.queryClientIds && a.idType && a.clientPid && a.idsDestroy;
    return a;
  }();
  return api;
}

bool Geometry(Display* dpy, Window root, Window w, XWindowAttributes& a, Rect& frame) {
  if (!XGetWindowAttributes(dpy, w, &a)) return false;
  int rx = 0, ry = 0;
  Window child = 0;
  if (!XTranslateCoordinates(dpy, w, root, 0, 0, &rx, &ry, &child)) return false;
  frame = Rect{static_cast<double>(rx), static_cast<double>(ry), static_cast<double>(a.width),
               static_cast<double>(a.height)};
  return true;
}

std::vector<Window> ChildrenOf(Display* dpy, Window w) {
  std::vector<Window> out;
  Window rootRet = 0, parent = 0;
  Window* kids = nullptr;
  unsigned int n = 0;
  if (XQueryTree(dpy, w, &rootRet, &parent, &kids, &n) && kids != nullptr) out.assign(kids, kids + n);
  if (kids != nullptr) XFree(kids);
  return out;
}

// The window with WM_CLASS at or up to two levels below `top` (under a reparenting WM the client is inside its
// frame); 0 when none.
Window ClientAtOrBelow(Display* dpy, Window top) {
  if (HasWmClass(dpy, top)) return top;
  for (Window k : ChildrenOf(dpy, top)) {
    if (HasWmClass(dpy, k)) return k;
    for (Window g : ChildrenOf(dpy, k))
      if (HasWmClass(dpy, g)) return g;
  }
  return 0;
}

std::vector<Window> NetClientList(Display* dpy, Window root) {
  std::vector<Window> out;
  const Atom check = XInternAtom(dpy, "_NET_SUPPORTING_WM_CHECK", True);
  const Atom list = XInternAtom(dpy, "_NET_CLIENT_LIST", True);
  if (check == None || list == None) return out;
  Atom type = None;
  int format = 0;
  unsigned long n = 0, after = 0;
  unsigned char* data = nullptr;
  const bool wm =
      XGetWindowProperty(dpy, root, check, 0, 1, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
      data != nullptr && type == XA_WINDOW && n >= 1;
  if (data != nullptr) XFree(data);
  if (!wm) return out;
  data = nullptr;
  if (XGetWindowProperty(dpy, root, list, 0, 4096, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
      data != nullptr && type == XA_WINDOW && format == 32) {
    const auto* ids = reinterpret_cast<const unsigned long*>(data);  // format-32 items are longs in Xlib
    out.assign(ids, ids + n);
  }
  if (data != nullptr) XFree(data);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::string text;
  ReadProcFile(path, text);  // a process that exits meanwhile reads as empty
  return text;
}

}  // namespace

long XResPids::PidOf(Display* dpy, unsigned long window) {
  const XResApi& api = LoadXRes();
  if (state_ == 0) {
    int ev = 0, er = 0, major = 0, minor = 0;
    state_ = api.ok && api.queryExtension(dpy, &ev, &er) && api.queryVersion(dpy, &major, &minor) &&
                     (major > 1 || (major == 1 && minor >= 2))
                 ? 1
                 : -1;
  }
  if (state_ < 0) return -1;
  XResClientIdSpecAbi spec{window, kClientIdPidMask};
  long n = 0;
  XResClientIdValueAbi* values = nullptr;
  long pid = -1;
  if (api.queryClientIds(dpy, 1, &spec, &n, &values) == Success) {
    for (long i = 0; i < n; i++)
      if (api.idType(&values[i]) == kClientIdPid) pid = api.clientPid(&values[i]);
    api.idsDestroy(n, values);
  }
  return pid > 0 ? pid : -1;
}

long NetWmPid(Display* dpy, unsigned long window, unsigned long atom) {
  if (atom == None) return -1;
  Atom type = None;
  int format = 0;
  unsigned long n = 0, after = 0;
  unsigned char* data = nullptr;
  long pid = -1;
  if (XGetWindowProperty(dpy, window, atom, 0, 1, False, XA_CARDINAL, &type, &format, &n, &after, &data) == Success &&
      data != nullptr && type == XA_CARDINAL && format == 32 && n >= 1)
    pid = static_cast<long>(reinterpret_cast<unsigned long*>(data)[0]);
  if (data != nullptr) XFree(data);
  return pid;
}

std::string WindowName(Display* dpy, unsigned long window) {
  std::string out;
  const Atom netName = XInternAtom(dpy, "_NET_WM_NAME", True);
  const Atom utf8 = XInternAtom(dpy, "UTF8_STRING", True);
  if (netName != None && utf8 != None) {
    Atom type = None;
    int format = 0;
    unsigned long n = 0, after = 0;
    unsigned char* data = nullptr;
    if (XGetWindowProperty(dpy, window, netName, 0, 1024, False, utf8, &type, &format, &n, &after, &data) == Success &&
        data != nullptr && type == utf8 && format == 8)
      out.assign(reinterpret_cast<char*>(data), n);
    if (data != nullptr) XFree(data);
  }
  if (out.empty()) {
    char* name = nullptr;
    if (XFetchName(dpy, window, &name) && name != nullptr) out = name;
    if (name != nullptr) XFree(name);
  }
  return out;
}

bool HasWmClass(Display* dpy, unsigned long window) {
  Atom type = None;
  int format = 0;
  unsigned long n = 0, after = 0;
  unsigned char* data = nullptr;
  const bool has = XGetWindowProperty(dpy, window, XA_WM_CLASS, 0, 0, False, AnyPropertyType, &type, &format, &n,
                                      &after, &data) == Success &&
                   type != None;
  if (data != nullptr) XFree(data);
  return has;
}

std::vector<X11Client> ListX11Clients(Display* dpy, unsigned long root, XResPids& xres) {
  std::vector<X11Client> out;
  std::vector<Window> clients = NetClientList(dpy, root);
  if (clients.empty()) {
    // No window manager (or one without EWMH): nobody sets WM_STATE, so WM_CLASS marks the clients.
    for (Window top : ChildrenOf(dpy, root)) {
      XWindowAttributes a;
      if (!XGetWindowAttributes(dpy, top, &a)) continue;
      if (a.map_state != IsViewable || a.c_class != InputOutput || a.override_redirect) continue;
      if (Window c = ClientAtOrBelow(dpy, top)) clients.push_back(c);
    }
  }
  const Atom netWmPid = XInternAtom(dpy, "_NET_WM_PID", True);
  for (Window w : clients) {
    X11Client c;
    c.xid = w;
    XWindowAttributes a;
    if (!Geometry(dpy, root, w, a, c.frame)) continue;
    if (a.c_class != InputOutput) continue;
    c.viewable = a.map_state == IsViewable;
    XClassHint hint{nullptr, nullptr};
    if (XGetClassHint(dpy, w, &hint)) {
      if (hint.res_name != nullptr) c.instance = hint.res_name;
      if (hint.res_class != nullptr) c.klass = hint.res_class;
    }
    if (hint.res_name != nullptr) XFree(hint.res_name);
    if (hint.res_class != nullptr) XFree(hint.res_class);
    c.title = WindowName(dpy, w);
    c.pid = NetWmPid(dpy, w, netWmPid);
    // Under a reparenting WM the client window, not its frame, is the app's connection's own.
    if (c.pid <= 0) c.pid = xres.PidOf(dpy, w);
    if (c.pid > 0) c.program = ProgramName(c.pid);
    out.push_back(std::move(c));
  }
  return out;
}

std::string ProgramName(int64_t pid) {
  const std::string base = "/proc/" + std::to_string(pid) + "/";
  std::string argv0 = ReadFile(base + "cmdline");
  argv0 = argv0.substr(0, argv0.find('\0'));
  // Chromium and Electron rewrite their title: the whole command line as one string, its arguments
  // joined by spaces. The program is then the part before the first space that names a file (a path
  // with spaces of its own keeps them: its prefixes name no file).
  for (size_t space = argv0.find(' '); space != std::string::npos; space = argv0.find(' ', space + 1)) {
    if (access(argv0.substr(0, space).c_str(), F_OK) == 0) {
      argv0.resize(space);
      break;
    }
  }
  if (const size_t slash = argv0.rfind('/'); slash != std::string::npos) argv0 = argv0.substr(slash + 1);
  if (!argv0.empty()) return argv0;
  std::string comm = ReadFile(base + "comm");
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\r')) comm.pop_back();
  return comm;
}

}  // namespace axsnap
