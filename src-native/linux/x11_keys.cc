// Synthetic key input with XTest: a combination ("ctrl+shift+t") pressed and
// released in order, and text typed key by key. Each keysym is found in the
// core keyboard mapping, read fresh for each call (a keycode at level 0, or
// level 1 with Shift); one the keyboard lacks is mapped onto a spare keycode
// for the call and the mapping restored afterwards.
//
// XTEST: XTestFakeKeyEvent, https://www.x.org/releases/current/doc/libXtst/xtestlib.html
// Xlib: XDisplayKeycodes, XGetKeyboardMapping, XChangeKeyboardMapping ("Keyboard
//   Encoding"), https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// The core protocol's keyboard (keysym lists per keycode, the lone alphabetic
//   keysym rule): "Keyboards", https://www.x.org/releases/current/doc/xproto/x11protocol.html
// XKB is not called: the server carries a core mapping change over into its XKB
// keymap, where XKB clients read it (XKB protocol, "Interactions Between XKB and
// the Core Protocol", https://www.x.org/releases/current/doc/kbproto/xkbproto.html).
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "x11_internal.h"

namespace axsnap {
namespace {

// A snapshot of the core keyboard mapping, read fresh for each operation
// (Xlib's own cache only refreshes when MappingNotify events are processed,
// which this client never does).
class KeyMap {
 public:
  explicit KeyMap(Display* dpy) {
    XDisplayKeycodes(dpy, &min_, &max_);
    if (max_ >= min_) syms_ = XGetKeyboardMapping(dpy, static_cast<KeyCode>(min_), max_ - min_ + 1, &per_);
    if (syms_ == nullptr) per_ = 0;
  }
  ~KeyMap() {
    if (syms_ != nullptr) XFree(syms_);
  }
  KeyMap(const KeyMap&) = delete;
  KeyMap& operator=(const KeyMap&) = delete;

  bool ok() const { return syms_ != nullptr && per_ > 0; }
  int per() const { return per_; }

  KeySym At(int kc, int col) const {
    if (!ok() || kc < min_ || kc > max_ || col < 0 || col >= per_) return NoSymbol;
    return syms_[(kc - min_) * per_ + col];
  }

  // A keycode producing `ks` at level 0 (no shift) or 1 (shift) of group 1.
  bool Find(KeySym ks, KeyCode& kc, int& level) const {
    if (!ok() || ks == NoSymbol) return false;
    for (int want = 0; want < 2; ++want) {
      for (int k = min_; k <= max_; ++k) {
        KeySym s0 = At(k, 0);
        KeySym s1 = per_ > 1 ? At(k, 1) : NoSymbol;
        if (s1 == NoSymbol && s0 != NoSymbol) {
          // Core protocol rule: a lone alphabetic keysym means (lower, upper).
          KeySym lower = 0, upper = 0;
          XConvertCase(s0, &lower, &upper);
          if (lower != upper) {
            s0 = lower;
            s1 = upper;
          }
        }
        if ((want == 0 ? s0 : s1) == ks) {
          kc = static_cast<KeyCode>(k);
          level = want;
          return true;
        }
      }
    }
    return false;
  }

  // Keycodes with no keysym at all: safe to borrow temporarily.
  std::vector<KeyCode> Spare() const {
    std::vector<KeyCode> out;
    if (!ok()) return out;
    for (int k = max_; k >= min_; --k) {  // high keycodes first: least likely to be physical keys
      bool empty = true;
      for (int c = 0; c < per_ && empty; ++c) empty = At(k, c) == NoSymbol;
      if (empty && k > 8) out.push_back(static_cast<KeyCode>(k));
    }
    return out;
  }

 private:
  int min_ = 0, max_ = -1, per_ = 0;
  KeySym* syms_ = nullptr;
};

}  // namespace

void X11Display::Impl::Key(KeyCode kc, bool down) { XTestFakeKeyEvent(dpy, kc, down ? True : False, CurrentTime); }

namespace {

// Keysyms that have no keycode borrow spare keycodes for the duration of one
// Keys/Type call. A batch is mapped before any of its keys is sent, then the
// clients get a moment to take in the new mapping (a mapping change made
// between two key events was sometimes missed by a client's Xlib/XKB
// refresh). Restoring waits too: toolkits translate a key event with the
// mapping they fetch when they process it, so restoring too early could turn
// the character into nothing.
constexpr int kMapSettleMs = 30;
constexpr int kRestoreDelayMs = 100;

class TempKeys {
 public:
  TempKeys(Display* dpy, const KeyMap& map) : dpy_(dpy), per_(map.per()), spare_(map.Spare()) {}
  ~TempKeys() { Restore(); }
  TempKeys(const TempKeys&) = delete;
  TempKeys& operator=(const TempKeys&) = delete;

  size_t Capacity() const { return spare_.size(); }

  // Maps `batch` (at most Capacity() keysyms) onto spare keycodes, after
  // restoring the previous batch.
  void Borrow(const std::vector<KeySym>& batch) {
    Restore();
    std::vector<KeySym> syms(static_cast<size_t>(per_), NoSymbol);
    for (size_t i = 0; i < batch.size() && i < spare_.size(); ++i) {
      syms[0] = batch[i];
      if (syms.size() > 1) syms[1] = batch[i];  // same symbol with or without shift
      XChangeKeyboardMapping(dpy_, spare_[i], per_, syms.data(), 1);
      used_.emplace_back(spare_[i], batch[i]);
    }
    XSync(dpy_, False);
    SleepMs(kMapSettleMs);
  }

  bool Lookup(KeySym ks, KeyCode& kc) const {
    for (const auto& m : used_) {
      if (m.second == ks) {
        kc = m.first;
        return true;
      }
    }
    return false;
  }

  void Restore() {
    if (used_.empty()) return;
    XSync(dpy_, False);
    SleepMs(kRestoreDelayMs);
    std::vector<KeySym> none(static_cast<size_t>(per_), NoSymbol);
    for (const auto& m : used_) XChangeKeyboardMapping(dpy_, m.first, per_, none.data(), 1);
    XSync(dpy_, False);
    used_.clear();
  }

 private:
  Display* dpy_;
  int per_;
  std::vector<KeyCode> spare_;
  std::vector<std::pair<KeyCode, KeySym>> used_;
};

struct Stroke {
  KeyCode kc = 0;
  bool shift = false;
};

// A keycode for `ks` (+ shift when it sits at level 1): from the keyboard
// mapping, else from the borrowed batch.
bool Resolve(const KeyMap& map, const TempKeys& temp, KeySym ks, Stroke& out) {
  int level = 0;
  if (map.Find(ks, out.kc, level)) {
    out.shift = level == 1;
    return true;
  }
  out.shift = false;
  return temp.Lookup(ks, out.kc);
}

}  // namespace

// Parsing only: a bad combination is refused before any check or event (x11_display.h).
Error ParseKeyCombo(const std::string& combo, KeyCombo& out) {
  out = KeyCombo{};

  // "ctrl+shift+t", "alt+F4", "ctrl++" (the key is '+'), "+".
  const std::string spec = Trim(combo);
  if (spec.empty()) return Error{ErrorCode::kInvalidArgument, "empty key combination"};
  std::vector<std::string> parts;
  std::string keyName;
  std::string mods = spec;
  if (spec == "+") {
    mods.clear();
    keyName = "+";
  } else if (spec.size() >= 2 && spec.compare(spec.size() - 2, 2, "++") == 0) {
    mods = spec.substr(0, spec.size() - 2);
    keyName = "+";
  }
  if (!mods.empty()) {
    size_t start = 0;
    for (;;) {
      const size_t plus = mods.find('+', start);
      parts.push_back(Trim(mods.substr(start, plus == std::string::npos ? std::string::npos : plus - start)));
      if (plus == std::string::npos) break;
      start = plus + 1;
    }
  }
  if (keyName.empty()) {
    keyName = parts.back();
    parts.pop_back();
  }
  for (const auto& p : parts) {
    if (p.empty()) return Error{ErrorCode::kInvalidArgument, "malformed key combination \"" + combo + "\""};
  }
  if (keyName.empty()) return Error{ErrorCode::kInvalidArgument, "malformed key combination \"" + combo + "\""};

  std::vector<unsigned long>& modSyms = out.mods;
  bool hasShift = false, hasOtherModifier = false;
  for (const auto& p : parts) {
    const KeySym ks = ModifierKeysym(Lower(p));
    if (ks == NoSymbol)
      return Error{ErrorCode::kInvalidArgument, "unknown modifier \"" + p + "\" in \"" + combo + "\""};
    if (std::find(modSyms.begin(), modSyms.end(), ks) != modSyms.end()) continue;
    modSyms.push_back(ks);
    if (ks == XK_Shift_L) {
      hasShift = true;
    } else {
      hasOtherModifier = true;
    }
  }

  KeySym key = NoSymbol;
  const std::string lowerKey = Lower(keyName);
  std::vector<uint32_t> cps;
  if ((key = NamedKeysym(lowerKey)) != NoSymbol) {
  } else if ((key = ModifierKeysym(lowerKey)) != NoSymbol) {
  } else if (DecodeUtf8(keyName, cps) && cps.size() == 1) {
    uint32_t cp = cps[0];
    // With a modifier, a letter names the key: "ctrl+A" is ctrl+a (add shift explicitly).
    if (hasOtherModifier && cp < 0x80) cp = static_cast<uint32_t>(std::tolower(static_cast<int>(cp)));
    key = KeysymForCodePoint(cp);
  } else {
    key = KeysymByName(keyName);
  }
  if (key == NoSymbol) return Error{ErrorCode::kInvalidArgument, "unknown key \"" + keyName + "\""};
  out.key = key;
  out.keyName = keyName;
  out.hasShift = hasShift;
  return {};
}

namespace x11 {

Error XKeys(Impl& d, const std::string& combo, const std::function<Error()>& beforeSend) {
  if (Error e = InputReady(d)) return e;
  KeyCombo parsed;
  if (Error e = ParseKeyCombo(combo, parsed)) return e;
  const std::vector<KeySym> modSyms(parsed.mods.begin(), parsed.mods.end());
  const KeySym key = parsed.key;
  const std::string& keyName = parsed.keyName;
  const bool hasShift = parsed.hasShift;
  if (beforeSend) {
    if (Error e = beforeSend()) return e;
  }

  d.BeginTrap();
  KeyMap map(d.dpy);
  if (!map.ok()) {
    d.EndTrap();
    return Error{ErrorCode::kInputFailed, "cannot read the keyboard mapping"};
  }
  std::vector<KeyCode> modCodes;
  for (KeySym ks : modSyms) {
    KeyCode kc = 0;
    int level = 0;
    if (!map.Find(ks, kc, level)) {
      d.EndTrap();
      return Error{ErrorCode::kInputFailed, std::string("no keycode for modifier ") + XKeysymToString(ks)};
    }
    modCodes.push_back(kc);
  }
  Error result;
  {
    TempKeys temp(d.dpy, map);
    Stroke stroke;
    {
      KeyCode kc = 0;
      int level = 0;
      if (!map.Find(key, kc, level) && temp.Capacity() > 0) temp.Borrow({key});
    }
    if (!Resolve(map, temp, key, stroke)) {
      result = Error{ErrorCode::kInputFailed, "no keycode for key \"" + keyName + "\" and no spare keycode to map it"};
    } else {
      if (stroke.shift && !hasShift) {
        KeyCode kc = 0;
        int level = 0;
        if (map.Find(XK_Shift_L, kc, level)) modCodes.push_back(kc);
      }
      for (KeyCode kc : modCodes) d.Key(kc, true);
      d.Key(stroke.kc, true);
      d.Key(stroke.kc, false);
      for (size_t i = modCodes.size(); i-- > 0;) d.Key(modCodes[i], false);
      XSync(d.dpy, False);
    }
  }  // restores borrowed keycodes
  if (d.EndTrap() != 0 && !result) result = Error{ErrorCode::kInputFailed, "keys failed: " + d.LastErrorText()};
  if (!d.Alive() && !result) result = Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return result;
}

// Keysyms for code points; CRLF types one Return. kInvalidArgument for a control character.
Error ToKeysyms(const std::vector<uint32_t>& cps, std::vector<KeySym>& syms) {
  syms.clear();
  syms.reserve(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') continue;  // CRLF types one Return
    const KeySym ks = KeysymForCodePoint(cps[i]);
    if (ks == NoSymbol) {
      return Error{ErrorCode::kInvalidArgument, "cannot type control character U+" + Hex(cps[i]).substr(2)};
    }
    syms.push_back(ks);
  }
  return {};
}

Error XType(Impl& d, const std::string& utf8) {
  if (Error e = InputReady(d)) return e;
  std::vector<uint32_t> cps;
  if (!DecodeUtf8(utf8, cps)) return Error{ErrorCode::kInvalidArgument, "text is not valid UTF-8"};
  std::vector<KeySym> syms;
  if (Error e = ToKeysyms(cps, syms)) return e;
  return XTypeSyms(d, syms);
}

Error XTypeSyms(Impl& d, const std::vector<KeySym>& syms) {
  if (Error e = InputReady(d)) return e;

  if (syms.empty()) return {};

  d.BeginTrap();
  KeyMap map(d.dpy);
  if (!map.ok()) {
    d.EndTrap();
    return Error{ErrorCode::kInputFailed, "cannot read the keyboard mapping"};
  }
  KeyCode shiftKc = 0;
  {
    int level = 0;
    map.Find(XK_Shift_L, shiftKc, level);
  }
  Error result;
  {
    TempKeys temp(d.dpy, map);
    size_t i = 0;
    while (i < syms.size() && !result) {
      // The next run of text whose unmapped keysyms fit in the spare keycodes.
      std::vector<KeySym> batch;
      size_t j = i;
      for (; j < syms.size(); ++j) {
        KeyCode kc = 0;
        int level = 0;
        if (map.Find(syms[j], kc, level) || std::find(batch.begin(), batch.end(), syms[j]) != batch.end()) continue;
        if (batch.size() == temp.Capacity()) break;
        batch.push_back(syms[j]);
      }
      if (j == i) {
        result = Error{ErrorCode::kInputFailed,
                       std::string("no keycode for ") + Hex(syms[i]) + " and no spare keycode to map it"};
        break;
      }
      if (!batch.empty()) temp.Borrow(batch);
      for (; i < j; ++i) {
        Stroke s;
        if (!Resolve(map, temp, syms[i], s)) {
          result = Error{ErrorCode::kInputFailed, std::string("no keycode for ") + Hex(syms[i])};
          break;
        }
        const bool shift = s.shift && shiftKc != 0;
        if (shift) d.Key(shiftKc, true);
        d.Key(s.kc, true);
        d.Key(s.kc, false);
        if (shift) d.Key(shiftKc, false);
        XFlush(d.dpy);
      }
    }
    XSync(d.dpy, False);
  }  // restores borrowed keycodes
  if (d.EndTrap() != 0 && !result) result = Error{ErrorCode::kInputFailed, "typing failed: " + d.LastErrorText()};
  if (!d.Alive() && !result) result = Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return result;
}

}  // namespace x11
}  // namespace axsnap
