// Builds the fake macOS world (fake_cf.h) from a plain JavaScript object, for
// the test-only addon axsnap_macfake. Everything the test addon needs from
// test/native/macfake comes through this header:
//   InstallFakeWorld(obj)   parse, check and install (clears the log); throws
//                           a JS TypeError naming the path of a bad field
//   ClearFakeWorld()        no world: AX calls fail, the window list is empty
//   FakeWorldLog()          the log lines, oldest first (formats below)
//   ClearFakeWorldLog()
//   FakeCFLiveObjects()     live CF objects, constants excluded (0 after a clean run)
//   FakeCFLiveObjectsSummary()  the first 20 of them, for a leak message
//   CreateFakeMacSystem()   the MacSystem to give MacBackend
//
// The world (every field optional unless marked; unknown keys are errors):
//   {
//     trusted: true,                 // Accessibility granted; false: AX calls give kAXErrorAPIDisabled
//     screenRecording: "granted",    // "granted" | "denied" | "unknown"
//     scale: 2,                      // BackingScale
//     focusedPid: 100,               // the system-wide AXFocusedApplication; 0 / absent: none
//     captureFails: false,           // every CaptureWindow fails
//     postDelay: { afterEvents: 4, ms: 600 },   // CGEventPost: the first 4 events at once, then each blocks 600 ms
//     focusMoves: { afterEvents: 4, toPid: 900 },   // once 4 events were posted, pid 900 has the focus
//     keyEventFails: [123],                  // CGEventCreateKeyboardEvent returns NULL for these key codes
//     keyboardLayout: "french",      // MacSystem::KeyboardLayout: "us" (default), "french", "german", "dvorak",
//                                    // "dvorak-qwerty-cmd", "russian", or "none" (no layout data)
//     processes: [77],               // issue 35 M6: processes that are no application (proc_listallpids, kill)
//     systemWide: { attrs: { AXFocusedUIElement: { ref: 7 } } },   // overrides the derived ones
//     apps: [{
//       pid: 100,                    // required, unique
//       name: "TextEdit", bundleId: "com.apple.TextEdit", bundlePath: "/System/Applications/TextEdit.app",
//       hidden: false, active: true, regular: true,
//       hungMs: 0,                   // each AX call on the app blocks this long (capped by the messaging timeout)
//       chromium: { revealAfterMs: 300, attribute: "AXManualAccessibility" },   // or "AXEnhancedUserInterface"
//       recoverOn: "activate",       // "unhide"|"activate"|"open"|"unminimize"|"raise"|"main"|"never"
//       faults: { ... },             // as on an element, for every element of the app
//       notifications: [{ atMs: 200, name: "AXValueChanged", element: 21 }],   // posted atMs after an
//                                    // AXObserver of the app is created; element absent: the app element
//       refuseNotifications: ["AXMenuOpened"],   // AXObserverAddNotification: kAXErrorNotificationUnsupported
//       busyNotifications: ["AXTitleChanged"],   // AXObserverAddNotification: kAXErrorCannotComplete
//       reopenWindows: [<element>],  // issue 35: not in AXWindows/AXChildren until open -b orders them in
//       root: <element>              // the app element; AXRole AXApplication and AXTitle = name by default
//     }],
//     installed: [{ bundleId: "com.adobe.Photoshop", name, executable, path,   // MacSystem::InstalledApps
//       listed: true,                // false: Launch Services knows it, the folder scan does not
//       app: <app> }],               // the app that runs once it is opened
//     windows: [{                    // the CG window list, front to back
//       number: 41, pid: 100,        // required
//       bounds: { x: 0, y: 25, w: 800, h: 600 },
//       layer: 0, name: "Untitled", ownerName: "<app name>", onScreen: true, alpha: 1, captureFails: false
//     }]
//   }
// An element:
//   { id: 3,                         // optional; ids are assigned in document order from 1, skipping explicit ones
//     attrs: { AXRole: "AXButton", AXTitle: "OK", AXEnabled: true,
//              AXPosition: { x: 10, y: 20 }, AXSize: { w: 80, h: 24 },
//              AXChildren: [ <element>, ... ],          // inline elements belong to the same app
//              AXFocusedWindow: { ref: 12 },            // a reference by id (cycles allowed)
//              AXValue: { error: "kAXErrorNoValue" },   // reading it fails with that AXError (name or number)
//              AXURL: { url: "https://example.com/" },
//              AXHelp: null,                            // present, no value: kAXErrorNoValue
//              AXValueIncrement: { double: 1 } },       // a number that is a double even when integral
//     settable: ["AXValue"], actions: ["AXPress"],
//     faults: { dieAfterReads: 3, failAttribute: { AXTitle: -25204 }, cannotComplete: false,
//               failBatchSlots: ["AXDescription"] },
//     hiddenChildren: [ <element>, ... ],   // Chromium: appear in AXChildren once revealed
//     growEveryMs: 0,              // > 0: one more of hiddenChildren appears every growEveryMs after install, unasked
//     cgWindow: 41 }                       // the CG window this AX window is (default: same pid and title)
// Values: string, number (integer → CFNumber SInt64, else Float64), boolean,
// null, arrays of values, { x, y } point, { w, h } size, { x, y, w, h } rect,
// { location, length } range, { url }, { url, base } (a URL relative to a base), { ref }, { error }, { double }, and
// inline elements (objects with `attrs`).
//
// Log lines (FakeWorldLog), with " -> <AXError>" appended when the call failed:
//   perform <id> <action>                 set <id> <attribute> <value>
//   timeout system|app <pid>|<id> <seconds>
//   prompt accessibility                  prompt screen recording
//   event leftMouseDown 120,340 clicks=1 flags=0x0      event mouseMoved 5,6 flags=0x0
//   event otherMouseDown 1,2 button=2 clicks=1 flags=0x0
//   event keyDown code=36 flags=0x100000  event keyUp code=36 flags=0x0
//   event unicode "héllo"                 (a keyDown carrying text; " flags=0x.." when set)
//   event scroll <dx> <dy> line|pixel     dropped event ...   (posted while untrusted)
//   text <id> replaced range(<loc>,<len>): <units> units fnv1a=0x<hash>
//                                         (after a set of AXSelectedText: the range it replaced in
//                                          AXValue, the new length in UTF-16 units, FNV-1a 64 of its UTF-8)
//   observe <id> <notification>           unobserve <id> <notification>   (AXObserver(Add|Remove)Notification)
//   notify <pid> <notification>[ <id>]    (delivered to an observer's callback by CFRunLoopRunInMode)
//   system unhide|activate <pid>, system open -b <id>, system capture <n> <w>x<h>,
//   system request screen recording, system sleep <ms>       (fake_mac_system.h)
// <id> is the element id ("system" for the system-wide element); values are
// "text", 12, 1.5, true, point(1,2), size(3,4), rect(1,2,3,4), range(0,5),
// url("..."), element(7), [a,b].
//
// Example:
//   installFakeWorld({ focusedPid: 100,
//     apps: [{ pid: 100, name: "Notes", bundleId: "com.apple.Notes",
//       root: { id: 1, attrs: { AXWindows: [{ ref: 2 }], AXFocusedWindow: { ref: 2 },
//         AXChildren: [{ id: 2, cgWindow: 41, actions: ["AXRaise"], settable: ["AXMain", "AXMinimized"],
//           attrs: { AXRole: "AXWindow", AXTitle: "Notes", AXMinimized: false,
//                    AXPosition: { x: 0, y: 25 }, AXSize: { w: 800, h: 600 },
//                    AXChildren: [{ attrs: { AXRole: "AXButton", AXTitle: "New" }, actions: ["AXPress"] }] } }] } } }],
//     windows: [{ number: 41, pid: 100, bounds: { x: 0, y: 25, w: 800, h: 600 }, name: "Notes" }] });
#pragma once

#include <napi.h>

#include "fake_cf.h"
#include "fake_mac_system.h"

namespace axsnap {

// Parses `world` (format above) without installing it.
macfake::FakeWorld FakeWorldFromJs(Napi::Object world);
void InstallFakeWorld(Napi::Object world);
// mac_direct.cc: macDirect* (MacBackend methods without an N-API surface:
// change events, the surfaces listing), fakeNotify, fakeObservers.
void RegisterMacDirect(Napi::Env env, Napi::Object exports);
// vision_rules_js.cc: visionMinimumTextHeight, visionLanguages (src-native/mac/vision_rules.h).
void RegisterVisionRules(Napi::Env env, Napi::Object exports);

}  // namespace axsnap
