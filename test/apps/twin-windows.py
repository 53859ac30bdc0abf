#!/usr/bin/python3
"""A GTK3 app with windows that share a title, for axsnap's result tests
(test/linux/results.test.ts).

The main window "Doc" has "Apply" (a counter label shows each press) and
"Open twin", which opens a second top-level window also titled "Doc" with an
"Apply" of its own. A window "Side" is open from the start, with "Side
apply" and its own counter. Every press prints "CLICKED <which>" on stdout.
"Stop app" stops the process (SIGSTOP) right after it handles the press: the
app then answers nothing until SIGCONT. Its AT-SPI name is "axsnap-twins".
"""
import os
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-twins")
GLib.set_application_name("axsnap-twins")


def log(what):
    print("CLICKED " + what, flush=True)


def counted(box, name, which):
    label = Gtk.Label(label=name + " 0")
    button = Gtk.Button(label=name)
    presses = [0]

    def pressed(_b):
        presses[0] += 1
        label.set_text("%s %d" % (name, presses[0]))
        log(which)

    button.connect("clicked", pressed)
    box.pack_start(button, False, False, 0)
    box.pack_start(label, False, False, 0)


def window(title, x, y):
    w = Gtk.Window(title=title)
    w.set_default_size(360, 240)
    w.move(x, y)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    w.add(box)
    return w, box


def main():
    side, side_box = window("Side", 480, 40)
    counted(side_box, "Side apply", "apply-in-SIDE")
    side.show_all()

    main_window, box = window("Doc", 40, 40)
    main_window.connect("destroy", Gtk.main_quit)
    counted(box, "Apply", "apply-in-MAIN")

    def open_twin(_b):
        twin, twin_box = window("Doc", 80, 320)
        counted(twin_box, "Apply", "apply-in-SECOND-window")
        twin.show_all()
        twin.present()
        log("open-twin")

    twin_button = Gtk.Button(label="Open twin")
    twin_button.connect("clicked", open_twin)
    box.pack_start(twin_button, False, False, 0)

    def stop(_b):
        log("stop")
        # After this handler returns and GTK has sent what it queued: the app then answers nothing.
        GLib.timeout_add(50, lambda: os.kill(os.getpid(), signal.SIGSTOP) and False)

    stop_button = Gtk.Button(label="Stop app")
    stop_button.connect("clicked", stop)
    box.pack_start(stop_button, False, False, 0)
    main_window.show_all()
    main_window.present()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
