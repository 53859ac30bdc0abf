// Synthetic input on macOS with CoreGraphics events (CGEvent.h), posted at the
// HID event tap so they reach whichever app is under the point or has key
// focus. Points are global top-left screen points, the same space AX frames
// use. Key combinations name keys like the Linux backend ("cmd+shift+t",
// "enter", "backspace", "delete" = forward delete, "f5"); letters and digits
// map to virtual key codes of the ANSI (US) layout; text goes as Unicode
// strings in chunks, so it does not depend on the layout at all.
#pragma once

#include <functional>
#include <string>

#include "../core/backend.h"

namespace axsnap {

Error PostPointer(const PointerEvent& ev);
Error PostKeys(const std::string& combo);
// Parses a combination without posting: INVALID_ARGUMENT before anything is sent.
Error CheckKeys(const std::string& combo);
// Types `utf8` in chunks of at most 20 UTF-16 units (never splitting a
// surrogate pair). `beforeChunk` runs before each chunk is posted; an error
// from it stops the typing there and is returned. `typed` counts the code
// points posted, also on error. Malformed UTF-8 is INVALID_ARGUMENT before
// anything is posted.
Error PostText(const std::string& utf8, size_t& typed, const std::function<Error()>& beforeChunk);

}  // namespace axsnap
