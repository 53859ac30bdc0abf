// Keysyms without a display: a character's keysym (Latin-1 as itself, other
// code points as Unicode keysyms), UTF-8 decoding, the modifier and key names
// a combination may use ("ctrl", "enter", "F5"), and X keysym names resolved
// ignoring case (KeysymNameOf, x11_display.h).
//
// Xlib: XStringToKeysym, XKeysymToString, XConvertCase ("Keyboard Encoding",
//   "Keysym Classification"): https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// KEYSYM encoding, Latin-1 and the Unicode keysyms (0x01000000 + code point):
//   the core protocol's Appendix A, https://www.x.org/releases/current/doc/xproto/x11protocol.html,
//   and X11/keysymdef.h.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "x11_display.h"
#include "x11_internal.h"

namespace axsnap {
namespace x11 {

KeySym KeysymForCodePoint(uint32_t cp) {
  if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff)) return cp;
  switch (cp) {
    case '\n':
    case '\r': return XK_Return;
    case '\t': return XK_Tab;
    case '\b': return XK_BackSpace;
    case 0x1b: return XK_Escape;
    case 0x7f: return XK_Delete;
    default: break;
  }
  if (cp < 0x20 || (cp >= 0x80 && cp < 0xa0) || cp > 0x10ffff) return NoSymbol;
  return 0x01000000UL | cp;
}

// Decodes UTF-8; false on malformed input.
bool DecodeUtf8(const std::string& s, std::vector<uint32_t>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    int extra = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xe0) == 0xc0) {
      cp = c & 0x1f;
      extra = 1;
    } else if ((c & 0xf0) == 0xe0) {
      cp = c & 0x0f;
      extra = 2;
    } else if ((c & 0xf8) == 0xf0) {
      cp = c & 0x07;
      extra = 3;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Reject overlong forms, surrogates and out-of-range values.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    out.push_back(cp);
    i += 1 + extra;
  }
  return true;
}

std::string Lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

KeySym ModifierKeysym(const std::string& lower) {
  if (lower == "ctrl" || lower == "control") return XK_Control_L;
  if (lower == "shift") return XK_Shift_L;
  if (lower == "alt" || lower == "option") return XK_Alt_L;
  if (lower == "super" || lower == "cmd" || lower == "command" || lower == "meta" || lower == "win") return XK_Super_L;
  return NoSymbol;
}

KeySym NamedKeysym(const std::string& lower) {
  struct Alias {
    const char* name;
    KeySym sym;
  };
  static const Alias kAliases[] = {
      {"enter", XK_Return},        {"return", XK_Return},     {"esc", XK_Escape},
      {"escape", XK_Escape},       {"tab", XK_Tab},           {"space", XK_space},
      {"backspace", XK_BackSpace}, {"delete", XK_Delete},     {"del", XK_Delete},
      {"insert", XK_Insert},       {"ins", XK_Insert},        {"up", XK_Up},
      {"down", XK_Down},           {"left", XK_Left},         {"right", XK_Right},
      {"arrowup", XK_Up},          {"arrowdown", XK_Down},    {"arrowleft", XK_Left},
      {"arrowright", XK_Right},    {"home", XK_Home},         {"end", XK_End},
      {"pageup", XK_Page_Up},      {"pgup", XK_Page_Up},      {"page_up", XK_Page_Up},
      {"pagedown", XK_Page_Down},  {"pgdn", XK_Page_Down},    {"page_down", XK_Page_Down},
      {"menu", XK_Menu},           {"plus", XK_plus},         {"minus", XK_minus},
      {"capslock", XK_Caps_Lock},  {"printscreen", XK_Print},
  };
  for (const auto& a : kAliases) {
    if (lower == a.name) return a.sym;
  }
  if (lower.size() >= 2 && lower.size() <= 3 && lower[0] == 'f' && std::isdigit(static_cast<unsigned char>(lower[1]))) {
    const int n = std::atoi(lower.c_str() + 1);
    if (n >= 1 && n <= 35) return XK_F1 + (n - 1);
  }
  return NoSymbol;
}

}  // namespace x11

namespace {

// Every named keysym, by its lower-case name. X resolves names exactly only
// (XStringToKeysym) and cannot list them, so the table is built once by naming
// every keysym value: the Latin-1 to special-key range, and the vendor pages
// (HP, DEC, Sun, XFree86). Unicode keysyms (U20AC) are not listed: a single
// character names its key anyway. An alias X does not give back for its value
// (Page_Up for Prior) still resolves exactly.
const std::unordered_map<std::string, std::vector<KeySym>>& KeysymsByLowerName() {
  static const std::unordered_map<std::string, std::vector<KeySym>> table = [] {
    std::unordered_map<std::string, std::vector<KeySym>> t;
    const auto add = [&t](KeySym ks) {
      const char* name = XKeysymToString(ks);
      if (name != nullptr) t[Lower(name)].push_back(ks);
    };
    for (KeySym ks = 0x20; ks <= 0xffff; ++ks) add(ks);
    for (const KeySym page : {0x1000ff00UL, 0x1004ff00UL, 0x1005ff00UL, 0x1008ff00UL})
      for (KeySym ks = page; ks <= page + 0xff; ++ks) add(ks);
    return t;
  }();
  return table;
}

// How many letters of `name` have the case they have in `x`.
int CaseAgreement(const std::string& name, const char* x) {
  int n = 0;
  for (size_t i = 0; i < name.size() && x[i] != '\0'; ++i) n += name[i] == x[i] ? 1 : 0;
  return n;
}

}  // namespace

namespace x11 {

KeySym KeysymByName(const std::string& name) {
  const KeySym exact = XStringToKeysym(name.c_str());
  if (exact != NoSymbol) return exact;
  const auto& table = KeysymsByLowerName();
  const auto it = table.find(Lower(name));
  if (it == table.end()) return NoSymbol;
  KeySym best = NoSymbol;
  int bestScore = -1;
  for (KeySym ks : it->second) {
    const int score = CaseAgreement(name, XKeysymToString(ks));
    KeySym lower = 0, upper = 0;
    XConvertCase(ks, &lower, &upper);
    if (score > bestScore || (score == bestScore && ks == lower)) {
      best = ks;
      bestScore = score;
    }
  }
  return best;
}

}  // namespace x11

std::string KeysymNameOf(const std::string& name) {
  const KeySym ks = KeysymByName(name);
  const char* x = ks == NoSymbol ? nullptr : XKeysymToString(ks);
  return x == nullptr ? std::string() : std::string(x);
}

}  // namespace axsnap
