// The Objective-C patterns mac_system_appkit.mm relies on, written correctly.
#include "decls/apple_objc.h"

#include <memory>
#include <string>

std::string Names() {
  std::string out;
  for (NSRunningApplication* app in NSWorkspace.sharedWorkspace.runningApplications) {
    if (const char* name = app.localizedName.UTF8String) out += name;
  }
  return out;
}

CFIndex Length(NSString* text) {
  CFStringRef cf = (__bridge CFStringRef)text;  // borrowed: ARC keeps `text` alive
  return CFStringGetLength(cf);
}

NSString* Adopt(CFStringRef created) {
  return (__bridge_transfer NSString*)created;  // ARC takes over the +1
}

bool Capture(SCContentFilter* filter, SCStreamConfiguration* config) {
  auto done = std::make_shared<bool>(false);
  dispatch_semaphore_t semaphore = dispatch_semaphore_create(0);
  if (@available(macOS 14.0, *)) {
    config.ignoreShadowsSingleWindow = YES;
    [SCScreenshotManager captureImageWithFilter:filter
                                  configuration:config
                              completionHandler:^(CGImageRef image, NSError* error) {
                                *done = image != nullptr && error == nil;
                                dispatch_semaphore_signal(semaphore);
                              }];
  }
  dispatch_semaphore_wait(semaphore, dispatch_time(DISPATCH_TIME_NOW, 5 * static_cast<int64_t>(NSEC_PER_SEC)));
  return *done;
}
