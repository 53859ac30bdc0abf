#include "key_layout.h"

#include <cctype>
#include <cstdio>

namespace axsnap {

namespace {

// ANSI (US) layout: the character each key code types without modifiers.
const char kAnsiChars[] = "asdfhgzxcv\0bqweryt123465=97-80]ou[ip\0lj'k;\\,/nm.\0\0`";

// Keypad keys (Carbon's kVK_ANSI_Keypad*): they type digits and operators the
// main block types too, and apps read them as the keypad's.
bool IsKeypad(int code) {
  switch (code) {
    case 65:
    case 67:
    case 69:
    case 71:
    case 75:
    case 76:
    case 78:
    case 81:
    case 82:
    case 83:
    case 84:
    case 85:
    case 86:
    case 87:
    case 88:
    case 89:
    case 91:
    case 92: return true;
    default: return false;
  }
}

bool Find(const std::array<uint16_t, 128>& table, uint16_t c, uint16_t& code) {
  for (int k = 0; k < 128; k++)
    if (table[k] == c && !IsKeypad(k)) {
      code = static_cast<uint16_t>(k);
      return true;
    }
  return false;
}

// Whether any key types a Latin letter: a layout that types none (Russian,
// Greek, Hebrew...) is not where macOS looks up shortcuts.
bool TypesLatin(const std::array<uint16_t, 128>& table) {
  for (uint16_t c : table)
    if (c >= 'a' && c <= 'z') return true;
  return false;
}

// "x" for a printable character (UTF-8), U+XXXX otherwise.
std::string Quoted(uint16_t c) {
  if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || (c >= 0xD800 && c <= 0xDFFF)) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
    return buf;
  }
  std::string utf8;
  if (c < 0x80) {
    utf8 += static_cast<char>(c);
  } else if (c < 0x800) {
    utf8 += static_cast<char>(0xC0 | (c >> 6));
    utf8 += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    utf8 += static_cast<char>(0xE0 | (c >> 12));
    utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    utf8 += static_cast<char>(0x80 | (c & 0x3F));
  }
  return "\"" + utf8 + "\"";
}

std::string LayoutName(const KeyLayout& layout) {
  return layout.source.empty() ? "the current keyboard layout" : "the keyboard layout " + layout.source;
}

}  // namespace

bool AnsiKeyCode(char c, uint16_t& code) {
  for (size_t i = 0; i + 1 < sizeof(kAnsiChars); i++)
    if (kAnsiChars[i] != '\0' && kAnsiChars[i] == c) {
      code = static_cast<uint16_t>(i);
      return true;
    }
  return false;
}

Error ChooseKey(const KeyLayout& layout, char c, bool command, bool control, KeyChoice& out) {
  const uint16_t ch = static_cast<uint16_t>(std::tolower(static_cast<unsigned char>(c)));
  if (!layout.known)
    return {ErrorCode::kInputFailed,
            "the keyboard layout is unknown (" + layout.why + "), so the key that types " + Quoted(ch) +
                " is unknown; nothing was sent",
            "named keys (enter, tab, arrows, f1...) still work; type text with typeText. Keys need the layout "
            "read on the main thread: call axsnap from the main JavaScript thread, not a worker_threads Worker"};
  out = {};
  if (command && Find(layout.command, ch, out.code)) return {};
  if (Find(layout.plain, ch, out.code)) return {};
  if (Find(layout.shifted, ch, out.code)) {
    out.shift = true;
    return {};
  }
  uint16_t ansi = 0;
  const bool hasAnsi = AnsiKeyCode(static_cast<char>(ch), ansi);
  // A non-Latin layout (Russian, Greek...) types no Latin letter at all; macOS
  // takes ⌘ (and ⌃) shortcuts from the Latin layout behind it, where the
  // letter sits at its ANSI position. A Latin layout that lacks the character
  // is refused instead: its ANSI key types another one, another shortcut.
  if (hasAnsi && (command || control) && !TypesLatin(command ? layout.command : layout.plain)) {
    out.code = ansi;
    return {};
  }
  std::string message = "no key of " + LayoutName(layout) + " types " + Quoted(ch);
  if (hasAnsi && layout.plain[ansi] != 0)
    message += " (the US key for it types " + Quoted(layout.plain[ansi]) + " here)";
  return {ErrorCode::kInvalidArgument, message + "; nothing was sent",
          "type text with typeText; for a shortcut, name the character this layout's key types"};
}

}  // namespace axsnap
