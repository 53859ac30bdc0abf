{
  "variables": { "axsnap_desktop%": "true" },
  "targets": [
    {
      "target_name": "axsnap",
      "sources": [
        "src-native/napi/addon.cc",
        "src-native/napi/act_js.cc",
        "src-native/napi/backend_js.cc",
        "src-native/napi/events_js.cc",
        "src-native/napi/fake_js.cc",
        "src-native/napi/observe_js.cc",
        "src-native/napi/convert.cc",
        "src-native/napi/marks_js.cc",
        "src-native/core/capture_choice.cc",
        "src-native/core/marks.cc",
        "src-native/core/names.cc",
        "src-native/core/ocr.cc",
        "src-native/core/png_budget.cc",
        "src-native/core/settle.cc",
        "src-native/core/snapshot.cc",
        "src-native/core/walk.cc",
        "src-native/core/window_choice.cc",
        "src-native/core/worker.cc",
        "src-native/fake/fake_backend.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_ADDON_API_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [
        ["OS=='linux'", {
          "sources": ["src-native/napi/peer_js.cc", "src-native/linux/peer_uid.cc"],
          "defines": ["AXSNAP_PEER_UID"],
          "cflags_cc": ["<!@(pkg-config --cflags zlib)"],
          "libraries": ["<!@(pkg-config --libs zlib)"]
        }],
        ["OS=='linux' and axsnap_desktop=='true'", {
          "sources": [
            "src-native/linux/atspi_actions.cc",
            "src-native/linux/atspi_apps.cc",
            "src-native/linux/atspi_backend.cc",
            "src-native/linux/atspi_batch.cc",
            "src-native/linux/atspi_cache.cc",
            "src-native/linux/atspi_children.cc",
            "src-native/linux/atspi_connection.cc",
            "src-native/linux/atspi_dialect.cc",
            "src-native/linux/atspi_events.cc",
            "src-native/linux/atspi_input_target.cc",
            "src-native/linux/atspi_nodes.cc",
            "src-native/linux/atspi_prefetch.cc",
            "src-native/linux/atspi_selection.cc",
            "src-native/linux/atspi_tables.cc",
            "src-native/linux/atspi_vocabulary.cc",
            "src-native/linux/dbus_reply.cc",
            "src-native/linux/gio_launch.cc",
            "src-native/linux/process_life.cc",
            "src-native/linux/proc_files.cc",
            "src-native/linux/x11_capture.cc",
            "src-native/linux/x11_clients.cc",
            "src-native/linux/x11_display.cc",
            "src-native/linux/x11_errors.cc",
            "src-native/linux/x11_guarded.cc",
            "src-native/linux/x11_keys.cc",
            "src-native/linux/x11_keysyms.cc",
            "src-native/linux/x11_observed.cc",
            "src-native/linux/x11_pointer.cc",
            "src-native/linux/x11_primitives.cc",
            "src-native/linux/x11_raise.cc",
            "src-native/linux/x11_windows.cc",
            "src-native/linux/gnome_shell.cc",
            "src-native/linux/linux_backend.cc",
            "src-native/linux/ocr_tesseract.cc",
            "src-native/linux/mutter_session.cc",
            "src-native/linux/pipewire_frame.cc",
            "src-native/linux/wayland_input.cc"
          ],
          "defines": ["AXSNAP_LINUX"],
          "cflags_cc": ["<!@(pkg-config --cflags gio-2.0 gio-unix-2.0 x11 xtst xext libpipewire-0.3)"],
          "libraries": ["<!@(pkg-config --libs gio-2.0 gio-unix-2.0 x11 xtst xext)", "-ldl"]
        }],
        ["OS=='mac'", {
          "sources": [
            "src-native/napi/peer_js.cc",
            "src-native/mac/peer_uid.cc",
            "src-native/mac/cf_convert.cc",
            "src-native/mac/cg_input.cc",
            "src-native/mac/key_layout.cc",
            "src-native/mac/key_layout_tis.cc",
            "src-native/mac/mac_actions.cc",
            "src-native/mac/mac_apps.cc",
            "src-native/mac/mac_backend.cc",
            "src-native/mac/mac_capture.cc",
            "src-native/mac/mac_elements.cc",
            "src-native/mac/mac_events.cc",
            "src-native/mac/mac_input.cc",
            "src-native/mac/mac_input_target.cc",
            "src-native/mac/mac_reads.cc",
            "src-native/mac/mac_recover.cc",
            "src-native/mac/mac_web.cc",
            "src-native/mac/mac_windows.cc",
            "src-native/mac/mac_system_appkit.mm",
            "src-native/mac/ocr_vision.mm"
          ],
          "defines": ["AXSNAP_MAC", "AXSNAP_PEER_UID"],
          "xcode_settings": {
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "CLANG_ENABLE_OBJC_ARC": "YES",
            "MACOSX_DEPLOYMENT_TARGET": "12.3",
            "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra", "-Wno-unused-parameter"]
          },
          "link_settings": {
            "libraries": [
              "-lz",
              "$(SDKROOT)/System/Library/Frameworks/ApplicationServices.framework",
              "$(SDKROOT)/System/Library/Frameworks/AppKit.framework",
              "$(SDKROOT)/System/Library/Frameworks/Carbon.framework",
              "$(SDKROOT)/System/Library/Frameworks/CoreFoundation.framework",
              "$(SDKROOT)/System/Library/Frameworks/CoreGraphics.framework",
              "$(SDKROOT)/System/Library/Frameworks/ScreenCaptureKit.framework",
              "$(SDKROOT)/System/Library/Frameworks/Vision.framework"
            ]
          }
        }]
      ]
    },
    {
      "target_name": "axsnap_peer",
      "target_conditions": [["_type=='loadable_module'", { "product_extension": "so" }]],
      "sources": ["src-native/napi/peer_addon.cc", "src-native/napi/peer_js.cc"],
      "defines": ["NAPI_VERSION=8"],
      "conditions": [
        ["OS=='linux'", {
          "sources": ["src-native/linux/peer_uid.cc"],
          "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
          "ldflags": ["-Wl,--as-needed"]
        }],
        ["OS=='mac'", {
          "sources": ["src-native/mac/peer_uid.cc"],
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "12.3",
            "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra"]
          }
        }]
      ]
    }
  ]
}
