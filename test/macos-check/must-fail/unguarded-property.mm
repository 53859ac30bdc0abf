// SCStreamConfiguration exists since 12.3 but ignoreShadowsSingleWindow only
// since 14.0: availability is checked per member, not per class.
// expect: 'setIgnoreShadowsSingleWindow:' is only available on macOS 14.0 or newer
// targets: darwin-arm64 darwin-x86_64
#include "decls/apple_objc.h"

void Configure(SCStreamConfiguration* config) {
  config.showsCursor = NO;
  config.ignoreShadowsSingleWindow = YES;
}
