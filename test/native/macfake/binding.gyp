# A test-only addon, axsnap_macfake: the package's N-API layer and core with
# the macOS backend's C++ compiled on Linux against the fake CoreFoundation /
# AX / CoreGraphics layer of this directory (fake_cf.cc) and FakeMacSystem.
# It is never shipped: build it from this directory with
#   cd test/native/macfake && npx node-gyp rebuild
# (output: build/Release/axsnap_macfake.node).
{
  "targets": [
    {
      "target_name": "axsnap_macfake",
      "sources": [
        "../../../src-native/napi/addon.cc",
        "../../../src-native/napi/act_js.cc",
        "../../../src-native/napi/backend_js.cc",
        "../../../src-native/napi/events_js.cc",
        "../../../src-native/napi/fake_js.cc",
        "../../../src-native/napi/observe_js.cc",
        "../../../src-native/napi/convert.cc",
        "../../../src-native/napi/marks_js.cc",
        "../../../src-native/core/capture_choice.cc",
        "../../../src-native/core/marks.cc",
        "../../../src-native/core/names.cc",
        "../../../src-native/core/ocr.cc",
        "../../../src-native/core/png_budget.cc",
        "../../../src-native/core/settle.cc",
        "../../../src-native/core/snapshot.cc",
        "../../../src-native/core/walk.cc",
        "../../../src-native/core/window_choice.cc",
        "../../../src-native/core/worker.cc",
        "../../../src-native/fake/fake_backend.cc",
        "../../../src-native/mac/mac_actions.cc",
        "../../../src-native/mac/mac_apps.cc",
        "../../../src-native/mac/mac_backend.cc",
        "../../../src-native/mac/mac_capture.cc",
        "../../../src-native/mac/mac_elements.cc",
        "../../../src-native/mac/mac_events.cc",
        "../../../src-native/mac/mac_input.cc",
        "../../../src-native/mac/mac_input_target.cc",
        "../../../src-native/mac/mac_reads.cc",
        "../../../src-native/mac/mac_recover.cc",
        "../../../src-native/mac/mac_web.cc",
        "../../../src-native/mac/mac_windows.cc",
        "../../../src-native/mac/cf_convert.cc",
        "../../../src-native/mac/cg_input.cc",
        "../../../src-native/mac/key_layout.cc",
        "fake_cf.cc",
        "fake_mac_system.cc",
        "mac_direct.cc",
        "vision_rules_js.cc",
        "world_from_js.cc"
      ],
      # "." for backend_js.cc's and fake_js.cc's #include "world_from_js.h" under AXSNAP_MAC_FAKE.
      "include_dirs": [".", "<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "AXSNAP_MAC_FAKE",
        "AXSNAP_APPLE_DECLS",
        "NAPI_VERSION=8",
        "NODE_ADDON_API_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter", "<!@(pkg-config --cflags zlib)"],
      "libraries": ["<!@(pkg-config --libs zlib)"]
    }
  ]
}
