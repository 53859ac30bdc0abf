// Which physical key types a character on the current keyboard layout (M5,
// third macOS review). A virtual key code names a physical key, and AppKit
// matches key equivalents on the character the current layout gives that key:
// on French AZERTY the key with ANSI code 0 ("a" on US) types "q", so cmd+a
// posted with code 0 is Quit. pressKey therefore posts the code of the key
// that types the character on the layout in use.
//
// The layout is read by MacSystem::KeyboardLayout (Text Input Sources and
// UCKeyTranslate, key_layout_tis.cc, on the main thread); the choice of a key
// is plain logic (ChooseKey), the same on a Mac and on the fake layer.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "../core/types.h"

namespace axsnap {

// What each virtual key code 0-127 types on one keyboard layout, under three
// modifier states, as UCKeyTranslate answers it (kUCKeyActionDown, no dead key
// state): one UTF-16 unit, or 0 where the key types nothing, more than one
// unit, or starts a dead key.
struct KeyLayout {
  bool known = false;                   // false: no table (`why` says why); character keys are refused
  std::string source;                   // the input source's id ("com.apple.keylayout.French"), for messages
  std::string why;                      // when !known
  std::array<uint16_t, 128> plain{};    // no modifier
  std::array<uint16_t, 128> shifted{};  // shift
  // Command (⌘). Layouts such as "Dvorak - QWERTY ⌘" switch to another table
  // under ⌘; AppKit matches ⌘ key equivalents on this one.
  std::array<uint16_t, 128> command{};
};

// The key to post for a character, and whether shift must be held for it
// (AZERTY types digits with shift).
struct KeyChoice {
  uint16_t code = 0;
  bool shift = false;
};

// The key that types the ASCII character `c` (a letter in lower case) on
// `layout`, for a chord holding ⌘ (`command`) and/or ⌃ (`control`):
//  - ⌘: the key whose ⌘ character is `c`, then the key whose plain character
//    is `c`; otherwise the plain key, then the shifted one.
//  - Keypad keys are never chosen (the main key block types the same
//    characters and apps tell them apart).
//  - A character no key types: for a ⌘ or ⌃ chord on a layout that types no
//    Latin letter at all (Russian, Greek: macOS takes those shortcuts from the
//    Latin layout behind it, so the ANSI position is the one that works), its
//    ANSI (US) key; else INVALID_ARGUMENT, nothing chosen: on a Latin layout
//    the ANSI key types another character, which for a shortcut is another
//    command.
//  - An unknown layout: INPUT_FAILED (`layout.why`), never a guess.
Error ChooseKey(const KeyLayout& layout, char c, bool command, bool control, KeyChoice& out);

// The ANSI (US) key code that types `c` without modifiers; false when none does.
bool AnsiKeyCode(char c, uint16_t& code);

// The real layout reader (key_layout_tis.cc, macOS only): the current keyboard
// layout through Text Input Sources. Only on the process's main thread (the
// TIS/TSM calls assert the main dispatch queue on recent macOS); elsewhere the
// layout is unknown and says so.
void ReadCurrentKeyLayout(KeyLayout& out);

}  // namespace axsnap
