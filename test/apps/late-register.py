#!/usr/bin/python3
"""A GTK3 window that joins the accessibility bus only when told to, for
test/linux/late-register.test.ts.

Started with NO_AT_BRIDGE=1, its window "Late note" is mapped on X11 while no
accessibility tree is registered: axsnap lists it by its X id (an app seen only
by its pixels). On SIGUSR1 it starts GTK's accessibility bridge itself, so it
then registers with the AT-SPI registry, as every GTK app does a moment after it
starts. The test chooses when that moment comes. Prints READY once the window
is shown and REGISTERED once the bridge started.
"""
import ctypes
import os
import signal

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-late-register")
GLib.set_application_name("axsnap-late-register")


def register():
    # The bridge reads NO_AT_BRIDGE itself; unset, it registers this process.
    os.environ.pop("NO_AT_BRIDGE", None)
    bridge = ctypes.CDLL("libatk-bridge-2.0.so.0")
    bridge.atk_bridge_adaptor_init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    status = bridge.atk_bridge_adaptor_init(None, None)
    print("REGISTERED" if status == 0 else f"BRIDGE FAILED {status}", flush=True)
    return GLib.SOURCE_CONTINUE


window = Gtk.Window(title="Late note")
window.set_default_size(320, 160)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
box.pack_start(Gtk.Label(label="Registered late"), False, False, 0)
box.pack_start(Gtk.Button(label="OK"), False, False, 0)
window.add(box)
window.connect("destroy", Gtk.main_quit)
window.show_all()
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, register)
GLib.idle_add(lambda: print("READY", flush=True) and False)
Gtk.main()
