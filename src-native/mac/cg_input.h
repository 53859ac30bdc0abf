// Synthetic input on macOS with CoreGraphics events (CGEvent.h), posted at the
// HID event tap so they reach whichever app is under the point or has key
// focus. Points are global top-left screen points, the same space AX frames
// use. Key combinations name keys like the Linux backend ("cmd+shift+t",
// "enter", "backspace", "delete" = forward delete, "f5"); a one-character key
// is the key that types it on the current keyboard layout (key_layout.h: on
// AZERTY "a" is the key at the ANSI "q" position); text goes as Unicode
// strings in chunks, so it does not depend on the layout at all, except line
// breaks, tabs and the like, which are their keys.
#pragma once

#include <functional>
#include <string>

#include "../core/backend.h"
#include "key_layout.h"

namespace axsnap {

Error PostPointer(const PointerEvent& ev);
// Presses the combination as a person would: each modifier key down (in the
// order written), the key down and up carrying its own flags (SecondaryFn,
// NumericPad for arrows and navigation keys) plus the modifiers', the
// modifier keys up in reverse. Every event is made before the first is
// posted: when one cannot be made, nothing is sent (INPUT_FAILED) and no
// modifier is left down. Character keys through `layout` (ChooseKey).
Error PostKeys(const std::string& combo, const KeyLayout& layout);
// Parses a combination without posting: INVALID_ARGUMENT (or INPUT_FAILED for
// a character key on an unknown layout) before anything is sent.
Error CheckKeys(const std::string& combo, const KeyLayout& layout);
// Types `utf8` in chunks of at most 20 UTF-16 units (never splitting a
// surrogate pair) holding no control character: \n, \r and CRLF press Return,
// \t Tab, \b Backspace, ESC Escape, DEL forward Delete, each as a key of its
// own (the system drops a Unicode string that starts with a line break, and
// one never presses Return). `beforeChunk` runs before each chunk and each
// such key; an error from it stops the typing there and is returned. `typed`
// counts the code points posted (CRLF is two), also on error. Malformed UTF-8
// and any other control character are INVALID_ARGUMENT before anything is
// posted.
Error PostText(const std::string& utf8, size_t& typed, const std::function<Error()>& beforeChunk);

}  // namespace axsnap
