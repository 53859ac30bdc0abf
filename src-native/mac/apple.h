// The Apple C APIs the macOS backend uses: CoreFoundation, HIServices (AX),
// CoreGraphics. On macOS these are the SDK's own headers. Everywhere else
// (the compile check and the fake-CF test build on Linux) they come from
// decls/apple_c.h, a declaration header written in this project that declares
// only what the backend uses, with Apple's documented signatures, ownership
// and availability. Objective-C declarations: decls/apple_objc.h.
#pragma once

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#include <ApplicationServices/ApplicationServices.h>
#include <CoreFoundation/CoreFoundation.h>
#include <CoreGraphics/CoreGraphics.h>
#else
#include "decls/apple_c.h"
#endif
