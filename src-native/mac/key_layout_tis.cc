// The current keyboard layout through Text Input Sources and UCKeyTranslate
// (Carbon's C API; macOS only). Compile-checked here, never run: what only a
// Mac can confirm is listed in docs/macos.md ("Keyboard layouts").
#include "apple.h"
#include "cf_ref.h"
#include "key_layout.h"

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#include <Carbon/Carbon.h>  // HIToolbox: TextInputSources.h, Events.h (LMGetKbdType)
#endif
#if defined(__APPLE__)
#include <pthread.h>  // pthread_main_np
#endif

#include <string>

namespace axsnap {

namespace {

using SourceRef = CFRef<TISInputSourceRef>;

std::string SourceId(TISInputSourceRef source) {
  auto id = static_cast<CFStringRef>(TISGetInputSourceProperty(source, kTISPropertyInputSourceID));
  if (!id) return {};
  char buf[256];
  return CFStringGetCString(id, buf, sizeof buf, kCFStringEncodingUTF8) ? std::string(buf) : std::string();
}

// The layout data ('uchr') of `source`, or null: input methods and some
// third-party sources have none.
CFDataRef LayoutData(TISInputSourceRef source) {
  if (!source) return nullptr;
  auto data = static_cast<CFDataRef>(TISGetInputSourceProperty(source, kTISPropertyUnicodeKeyLayoutData));
  return data && CFDataGetLength(data) > 0 ? data : nullptr;
}

// What each key code types with `modifiers` (EventModifiers >> 8, as
// UCKeyTranslate takes them): one UTF-16 unit, 0 for nothing, several units,
// or a dead key (a fresh dead-key state for every key, dead keys not
// suppressed, so a dead key answers no character).
void Translate(const UCKeyboardLayout* uchr, UInt32 modifiers, UInt32 keyboardType, std::array<uint16_t, 128>& out) {
  for (UInt16 code = 0; code < 128; code++) {
    UInt32 dead = 0;
    UniChar chars[4] = {};
    UniCharCount length = 0;
    const OSStatus status =
        UCKeyTranslate(uchr, code, kUCKeyActionDown, modifiers, keyboardType, 0, &dead, 4, &length, chars);
    out[code] = status == noErr && length == 1 && dead == 0 ? chars[0] : 0;
  }
}

}  // namespace

void ReadCurrentKeyLayout(KeyLayout& out) {
  out = KeyLayout();
  // Apple documents no thread for TIS, but recent macOS asserts the main
  // dispatch queue inside TSMGetInputSourceProperty (EXC_BREAKPOINT in
  // dispatch_assert_queue: XQuartz #205, deskflow #9924, #10136). The main
  // thread passes that assertion without a running run loop: libdispatch binds
  // the main queue to it at start-up (libdispatch_init).
  if (!pthread_main_np()) {
    out.why = "the keyboard layout can only be read on the main thread";
    return;
  }
  SourceRef source = SourceRef::Adopt(TISCopyCurrentKeyboardLayoutInputSource());
  CFDataRef data = LayoutData(source.get());
  if (!data) {
    // An input method may type through the last ASCII-capable layout instead.
    SourceRef ascii = SourceRef::Adopt(TISCopyCurrentASCIICapableKeyboardLayoutInputSource());
    if (CFDataRef asciiData = LayoutData(ascii.get())) {
      source = ascii;
      data = asciiData;
    }
  }
  out.source = source ? SourceId(source.get()) : std::string();
  if (!data) {
    out.why = "the input source " + (out.source.empty() ? std::string("in use") : out.source) +
              " has no keyboard layout data";
    return;
  }
  const auto* uchr = reinterpret_cast<const UCKeyboardLayout*>(CFDataGetBytePtr(data));
  const UInt32 keyboardType = LMGetKbdType();
  Translate(uchr, 0, keyboardType, out.plain);
  Translate(uchr, (shiftKey >> 8) & 0xFF, keyboardType, out.shifted);
  Translate(uchr, (cmdKey >> 8) & 0xFF, keyboardType, out.command);
  out.known = true;
}

}  // namespace axsnap
