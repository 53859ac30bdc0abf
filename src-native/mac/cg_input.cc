#include "cg_input.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "apple.h"
#include "cf_ref.h"
#include "key_layout.h"

namespace axsnap {

namespace {

using EventRef = CFRef<CGEventRef>;

// Apps drop events that arrive faster than a person could make them
// (a down and up in one tick can read as nothing); a few ms between is enough.
void Pace() { std::this_thread::sleep_for(std::chrono::milliseconds(8)); }

Error Post(const EventRef& event, const char* what) {
  if (!event) return {ErrorCode::kInputFailed, std::string("could not create the ") + what + " event"};
  CGEventPost(kCGHIDEventTap, event.get());
  return {};
}

// A private state: the user's physically held modifiers do not leak into
// our clicks (a held cmd would make a click a cmd-click).
CFRef<CGEventSourceRef> Source() {
  return CFRef<CGEventSourceRef>::Adopt(CGEventSourceCreate(kCGEventSourceStatePrivate));
}

struct ButtonEvents {
  CGEventType down, up, dragged;
  CGMouseButton button;
};

ButtonEvents ForButton(int button) {
  if (button == 3)
    return {kCGEventRightMouseDown, kCGEventRightMouseUp, kCGEventRightMouseDragged, kCGMouseButtonRight};
  if (button == 2)
    return {kCGEventOtherMouseDown, kCGEventOtherMouseUp, kCGEventOtherMouseDragged, kCGMouseButtonCenter};
  return {kCGEventLeftMouseDown, kCGEventLeftMouseUp, kCGEventLeftMouseDragged, kCGMouseButtonLeft};
}

Error Mouse(CGEventSourceRef source, CGEventType type, CGPoint at, CGMouseButton button, int64_t clickState) {
  EventRef e = EventRef::Adopt(CGEventCreateMouseEvent(source, type, at, button));
  // The click state is what turns two clicks into a double click for AppKit.
  if (e && clickState > 0) CGEventSetIntegerValueField(e.get(), kCGMouseEventClickState, clickState);
  return Post(e, "mouse");
}

struct Named {
  const char* name;
  CGKeyCode code;
};

// Virtual key codes (Carbon's kVK_* values, which CGKeyCode shares).
const Named kNamedKeys[] = {
    {"enter", 36},    {"return", 36},   {"tab", 48},       {"space", 49},      {"backspace", 51},   {"escape", 53},
    {"esc", 53},      {"delete", 117},  {"del", 117},      {"home", 115},      {"end", 119},        {"pageup", 116},
    {"pgup", 116},    {"page_up", 116}, {"pagedown", 121}, {"pgdn", 121},      {"page_down", 121},  {"left", 123},
    {"right", 124},   {"down", 125},    {"up", 126},       {"arrowleft", 123}, {"arrowright", 124}, {"arrowdown", 125},
    {"arrowup", 126}, {"capslock", 57}, {"help", 114},     {"f1", 122},        {"f2", 120},         {"f3", 99},
    {"f4", 118},      {"f5", 96},       {"f6", 97},        {"f7", 98},         {"f8", 100},         {"f9", 101},
    {"f10", 109},     {"f11", 103},     {"f12", 111},      {"f13", 105},       {"f14", 107},        {"f15", 113},
    {"f16", 106},     {"f17", 64},      {"f18", 79},       {"f19", 80},        {"f20", 90},         {"plus", 24},
    {"minus", 27},
};

// A modifier: its flag, and the key (left-hand one) that makes it.
struct ModifierKey {
  CGEventFlags flag;
  CGKeyCode code;
};

bool Modifier(const std::string& lower, ModifierKey& mod) {
  if (lower == "cmd" || lower == "command" || lower == "super" || lower == "meta" || lower == "win")
    mod = {kCGEventFlagMaskCommand, 55};
  else if (lower == "ctrl" || lower == "control")
    mod = {kCGEventFlagMaskControl, 59};
  else if (lower == "alt" || lower == "option" || lower == "opt")
    mod = {kCGEventFlagMaskAlternate, 58};
  else if (lower == "shift")
    mod = {kCGEventFlagMaskShift, 56};
  else if (lower == "fn")
    mod = {kCGEventFlagMaskSecondaryFn, 63};
  else
    return false;
  return true;
}

const ModifierKey kShift = {kCGEventFlagMaskShift, 56};

// The flags a key carries of its own, as a keyboard makes them: the arrows
// are keypad and function keys, Home/End/Page Up/Page Down/forward Delete/Help
// and F1-F20 function keys. Apps read them: ctrl+arrow without SecondaryFn is
// not the Mission Control shortcut, and some text views ignore an arrow
// without them.
const CGEventFlags kKeyOwnFlags = kCGEventFlagMaskSecondaryFn | kCGEventFlagMaskNumericPad;

CGEventFlags OwnFlags(CGKeyCode code) {
  if (code >= 123 && code <= 126) return kCGEventFlagMaskSecondaryFn | kCGEventFlagMaskNumericPad;
  static const CGKeyCode kFunctionKeys[] = {114, 115, 116, 117, 119, 121, 122, 120, 99,  118, 96, 97, 98,
                                            100, 101, 109, 103, 111, 105, 107, 113, 106, 64,  79, 80, 90};
  for (CGKeyCode k : kFunctionKeys)
    if (k == code) return kCGEventFlagMaskSecondaryFn;
  return 0;
}

// A key event with `flags` added to the key's own (those CGEventCreateKeyboardEvent
// gave it and those of OwnFlags): CGEventSetFlags replaces every flag, so
// setting the modifiers alone would drop them. Null when it cannot be made.
EventRef KeyEvent(CGEventSourceRef source, CGKeyCode code, bool down, CGEventFlags flags) {
  EventRef e = EventRef::Adopt(CGEventCreateKeyboardEvent(source, code, down));
  if (e) CGEventSetFlags(e.get(), (CGEventGetFlags(e.get()) & kKeyOwnFlags) | OwnFlags(code) | flags);
  return e;
}

// A modifier key event carrying exactly the modifiers held once it is
// processed: nothing of its own, so the fn key's release does not say fn is
// still down.
EventRef ModifierEvent(CGEventSourceRef source, const ModifierKey& m, bool down, CGEventFlags held) {
  EventRef e = EventRef::Adopt(CGEventCreateKeyboardEvent(source, m.code, down));
  if (e) CGEventSetFlags(e.get(), held);
  return e;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// UTF-8 to UTF-16 code units; false on malformed input.
bool Utf16(const std::string& s, std::vector<UniChar>& out) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    size_t n = 0;
    if (c < 0x80)
      cp = c, n = 1;
    else if ((c >> 5) == 6)
      cp = c & 0x1F, n = 2;
    else if ((c >> 4) == 14)
      cp = c & 0x0F, n = 3;
    else if ((c >> 3) == 30)
      cp = c & 0x07, n = 4;
    else
      return false;
    if (i + n > s.size()) return false;
    for (size_t k = 1; k < n; k++) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    i += n;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<UniChar>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<UniChar>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<UniChar>(cp));
    }
  }
  return true;
}

}  // namespace

Error PostPointer(const PointerEvent& ev) {
  CFRef<CGEventSourceRef> source = Source();
  const CGPoint at = CGPointMake(ev.x, ev.y);
  const ButtonEvents b = ForButton(ev.button);
  switch (ev.kind) {
    case PointerEvent::Kind::kMove: return Mouse(source.get(), kCGEventMouseMoved, at, kCGMouseButtonLeft, 0);
    case PointerEvent::Kind::kClick: {
      if (Error err = Mouse(source.get(), kCGEventMouseMoved, at, kCGMouseButtonLeft, 0)) return err;
      const int count = std::max(1, std::min(ev.count, 3));
      for (int i = 1; i <= count; i++) {
        Pace();
        if (Error err = Mouse(source.get(), b.down, at, b.button, i)) return err;
        Pace();
        if (Error err = Mouse(source.get(), b.up, at, b.button, i)) return err;
      }
      return {};
    }
    case PointerEvent::Kind::kWheel: {
      if (Error err = Mouse(source.get(), kCGEventMouseMoved, at, kCGMouseButtonLeft, 0)) return err;
      // Lines, as a notched wheel sends them; positive dy scrolls down in the
      // model, negative wheel1 scrolls down in CoreGraphics. Apple: values are
      // "typically in a range from -10 to +10", so larger ones go in steps.
      int32_t dy = static_cast<int32_t>(std::lround(-ev.dy));
      int32_t dx = static_cast<int32_t>(std::lround(-ev.dx));
      while (dy != 0 || dx != 0) {
        const int32_t sy = std::max(-10, std::min(10, dy));
        const int32_t sx = std::max(-10, std::min(10, dx));
        EventRef e =
            EventRef::Adopt(CGEventCreateScrollWheelEvent2(source.get(), kCGScrollEventUnitLine, 2, sy, sx, 0));
        // At the point itself: the move just posted may not be processed yet.
        if (e) CGEventSetLocation(e.get(), at);
        Pace();
        if (Error err = Post(e, "scroll")) return err;
        dy -= sy;
        dx -= sx;
      }
      return {};
    }
    case PointerEvent::Kind::kDrag: {
      const CGPoint to = CGPointMake(ev.toX, ev.toY);
      if (Error err = Mouse(source.get(), kCGEventMouseMoved, at, kCGMouseButtonLeft, 0)) return err;
      Pace();
      if (Error err = Mouse(source.get(), b.down, at, b.button, 1)) return err;
      // Intermediate points: drag targets track movement, not jumps.
      const int steps = 10;
      for (int i = 1; i <= steps; i++) {
        Pace();
        const CGPoint p = CGPointMake(ev.x + (ev.toX - ev.x) * i / steps, ev.y + (ev.toY - ev.y) * i / steps);
        if (Error err = Mouse(source.get(), b.dragged, p, b.button, 1)) return err;
      }
      Pace();
      return Mouse(source.get(), b.up, to, b.button, 1);
    }
  }
  return {ErrorCode::kInvalidArgument, "unknown pointer event"};
}

namespace {

// The key and its modifiers, in the order written (each once). A character
// key is the key that types it on `layout` (key_layout.h), with shift added
// when the layout needs it.
Error ParseKeys(const std::string& combo, const KeyLayout& layout, CGKeyCode& code, std::vector<ModifierKey>& mods) {
  std::vector<std::string> parts;
  size_t start = 0;
  // "cmd++" names the plus key: a '+' right after a separator is the key itself.
  while (start <= combo.size()) {
    size_t plus = combo.find('+', start == combo.size() ? start : start + 1);
    if (plus == std::string::npos) plus = combo.size();
    parts.push_back(combo.substr(start, plus - start));
    start = plus + 1;
    if (plus == combo.size()) break;
  }
  if (parts.empty() || parts.back().empty())
    return {ErrorCode::kInvalidArgument, "malformed key combination \"" + combo + "\""};
  const std::string key = parts.back();
  parts.pop_back();
  mods.clear();
  CGEventFlags flags = 0;
  auto add = [&](const ModifierKey& m) {
    if (flags & m.flag) return;
    flags |= m.flag;
    mods.push_back(m);
  };
  for (const std::string& p : parts) {
    ModifierKey m{};
    if (p.empty() || !Modifier(Lower(p), m))
      return {ErrorCode::kInvalidArgument, "unknown modifier \"" + p + "\" in \"" + combo + "\""};
    add(m);
  }
  const std::string lower = Lower(key);
  code = 0;
  for (const Named& n : kNamedKeys)
    if (lower == n.name) {
      code = n.code;
      return {};
    }
  if (key.size() != 1 || key[0] < 0x20 || key[0] > 0x7E)
    return {ErrorCode::kInvalidArgument, "unknown key \"" + key + "\" (macOS: a key name, or one ASCII character)"};
  // An upper-case letter alone means shift + letter, as typed.
  const bool upperAlone = std::isupper(static_cast<unsigned char>(key[0])) && mods.empty();
  KeyChoice choice;
  if (Error err = ChooseKey(layout, key[0], (flags & kCGEventFlagMaskCommand) != 0,
                            (flags & kCGEventFlagMaskControl) != 0, choice))
    return err;
  code = choice.code;
  if (choice.shift || upperAlone) add(kShift);
  return {};
}

}  // namespace

Error CheckKeys(const std::string& combo, const KeyLayout& layout) {
  CGKeyCode code = 0;
  std::vector<ModifierKey> mods;
  return ParseKeys(combo, layout, code, mods);
}

Error PostKeys(const std::string& combo, const KeyLayout& layout) {
  CGKeyCode code = 0;
  std::vector<ModifierKey> mods;
  if (Error err = ParseKeys(combo, layout, code, mods)) return err;
  CFRef<CGEventSourceRef> source = Source();
  // A combination is typed as a person types it (CGEvent.h: every keystroke,
  // modifiers included, must be entered): each modifier key goes down in the
  // order written, the key goes down and up carrying its own flags and the
  // modifiers, the modifiers come up in reverse. Every event is made before
  // the first is posted, so a failure sends nothing and no modifier is ever
  // left down (CGEventPost itself cannot fail).
  std::vector<EventRef> events;
  CGEventFlags held = 0;
  for (const ModifierKey& m : mods) {
    held |= m.flag;
    events.push_back(ModifierEvent(source.get(), m, true, held));
  }
  events.push_back(KeyEvent(source.get(), code, true, held));
  events.push_back(KeyEvent(source.get(), code, false, held));
  for (size_t i = mods.size(); i-- > 0;) {
    held &= ~mods[i].flag;
    events.push_back(ModifierEvent(source.get(), mods[i], false, held));
  }
  for (const EventRef& e : events)
    if (!e) return {ErrorCode::kInputFailed, "could not create the key events; nothing was sent"};
  for (size_t i = 0; i < events.size(); i++) {
    if (i > 0) Pace();
    CGEventPost(kCGHIDEventTap, events[i].get());
  }
  return {};
}

namespace {

// Characters typed as keys, never inside a Unicode string: the system drops a
// Unicode string that starts with a line break (enigo documents it), and a
// line break in one never presses Return, so submit-on-Enter fields would not
// submit. As on Linux: \n, \r and CRLF are Return, \t Tab, \b Backspace,
// ESC Escape, DEL forward Delete; any other control character is refused.
bool ControlKey(UniChar c, CGKeyCode& code) {
  switch (c) {
    case '\n':
    case '\r': code = 36; return true;
    case '\t': code = 48; return true;
    case '\b': code = 51; return true;
    case 0x1B: code = 53; return true;
    case 0x7F: code = 117; return true;
    default: return false;
  }
}

bool IsControl(UniChar c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// What the text is typed as: Unicode strings of at most 20 UTF-16 units
// (CGEventKeyboardSetUnicodeString's limit; never splitting a surrogate pair)
// and single keys for the control characters.
struct Piece {
  bool key = false;
  CGKeyCode code = 0;     // key
  size_t start = 0;       // text: first unit
  size_t units = 0;       // text: units, key: 1 or 2 (CRLF)
  size_t codePoints = 0;  // what it counts as typed
};

Error Pieces(const std::vector<UniChar>& units, std::vector<Piece>& out) {
  const size_t kChunk = 20;
  for (size_t i = 0; i < units.size();) {
    CGKeyCode code = 0;
    if (ControlKey(units[i], code)) {
      const bool crlf = units[i] == '\r' && i + 1 < units.size() && units[i + 1] == '\n';
      Piece p;
      p.key = true;
      p.code = code;
      p.start = i;
      p.units = p.codePoints = crlf ? 2 : 1;
      out.push_back(p);
      i += p.units;
      continue;
    }
    if (IsControl(units[i])) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "%04X", static_cast<unsigned>(units[i]));
      return {ErrorCode::kInvalidArgument, std::string("cannot type control character U+") + hex};
    }
    size_t n = 0;
    while (i + n < units.size() && n < kChunk && !IsControl(units[i + n])) n++;
    // The chunk is full and ends on the first half of a surrogate pair.
    if (n == kChunk && i + n < units.size() && units[i + n - 1] >= 0xD800 && units[i + n - 1] <= 0xDBFF) n--;
    Piece p;
    p.start = i;
    p.units = n;
    // Code points: every unit but the second half of a surrogate pair.
    for (size_t k = i; k < i + n; k++) p.codePoints += !(units[k] >= 0xDC00 && units[k] <= 0xDFFF);
    out.push_back(p);
    i += n;
  }
  return {};
}

}  // namespace

Error PostText(const std::string& utf8, size_t& typed, const std::function<Error()>& beforeChunk) {
  typed = 0;
  std::vector<UniChar> units;
  if (!Utf16(utf8, units)) return {ErrorCode::kInvalidArgument, "the text is not valid UTF-8"};
  std::vector<Piece> pieces;
  // Refused as a whole, before anything is posted.
  if (Error err = Pieces(units, pieces)) return err;
  CFRef<CGEventSourceRef> source = Source();
  for (const Piece& p : pieces) {
    if (beforeChunk)
      if (Error err = beforeChunk()) return err;
    EventRef down, up;
    if (p.key) {
      // The key's own flags only: a modifier held now must not make Return cmd+Return.
      down = KeyEvent(source.get(), p.code, true, 0);
      up = KeyEvent(source.get(), p.code, false, 0);
    } else {
      down = EventRef::Adopt(CGEventCreateKeyboardEvent(source.get(), 0, true));
      up = EventRef::Adopt(CGEventCreateKeyboardEvent(source.get(), 0, false));
      if (down && up) {
        CGEventKeyboardSetUnicodeString(down.get(), static_cast<UniCharCount>(p.units), units.data() + p.start);
        CGEventKeyboardSetUnicodeString(up.get(), static_cast<UniCharCount>(p.units), units.data() + p.start);
        // Key code 0 is the A key: a modifier held at this moment would turn the
        // text into cmd+A. The events carry no modifiers of their own.
        CGEventSetFlags(down.get(), 0);
        CGEventSetFlags(up.get(), 0);
      }
    }
    if (!down || !up) return {ErrorCode::kInputFailed, "could not create the key events"};
    CGEventPost(kCGHIDEventTap, down.get());
    if (p.key) Pace();
    CGEventPost(kCGHIDEventTap, up.get());
    typed += p.codePoints;
    Pace();
  }
  return {};
}

}  // namespace axsnap
