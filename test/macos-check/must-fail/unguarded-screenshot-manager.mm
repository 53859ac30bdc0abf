// SCScreenshotManager is macOS 14.0+; we deploy to 12.3, so a call outside
// `if (@available(macOS 14.0, *))` must not build.
// expect: 'SCScreenshotManager' is only available on macOS 14.0 or newer
// targets: darwin-arm64 darwin-x86_64
#include "decls/apple_objc.h"

void Capture(SCContentFilter* filter, SCStreamConfiguration* config) {
  [SCScreenshotManager captureImageWithFilter:filter
                                configuration:config
                            completionHandler:^(CGImageRef image, NSError* error) {
                              (void)image;
                              (void)error;
                            }];
}
