#!/usr/bin/python3
"""A GTK3 app with two surfaces of the same title, for the CLI's ref tests
(test/doors/cli-refs.test.ts).

Its main window is titled "Doc" and has a button "Apply". Clicking that
button prints `CLICKED apply-in-MAIN` and opens, once, another surface also
titled "Doc" with its own "Apply": with `dialog` (the default) a modal dialog
of the main window, with `window` a second top-level window. Its button
prints `CLICKED apply-in-DIALOG` or `CLICKED apply-in-SECOND-window`; a
click by the pointer (not by an accessibility action) adds " by-pointer". Every
line goes to stdout, flushed, so the test reads which button was clicked. Its
AT-SPI name is "axsnap-same-title-test".
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
# Gdk too: with GTK 4's typelibs installed (gnome-shell brings them), an unversioned Gdk import loads 4.0.
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-same-title-test")
GLib.set_application_name("axsnap-same-title-test")

MODE = sys.argv[1] if len(sys.argv) > 1 else "dialog"
if MODE not in ("dialog", "window"):
    sys.exit("usage: same-title-app.py [dialog|window]")


def say(line):
    print(line, flush=True)


def apply_button(where):
    button = Gtk.Button(label="Apply")

    def clicked(_button):
        # A pointer click arrives as a button event; an accessibility action has none.
        event = Gtk.get_current_event()
        by = " by-pointer" if event is not None and event.type == Gdk.EventType.BUTTON_RELEASE else ""
        say("CLICKED apply-in-" + where + by)

    button.connect("clicked", clicked)
    return button


def open_other(main):
    if MODE == "dialog":
        other = Gtk.Dialog(title="Doc", transient_for=main, modal=True)
        other.get_content_area().add(Gtk.Label(label="The dialog"))
        other.get_content_area().add(apply_button("DIALOG"))
        other.set_default_size(300, 140)
    else:
        other = Gtk.Window(title="Doc")
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
        box.pack_start(Gtk.Label(label="The second window"), False, False, 0)
        box.pack_start(apply_button("SECOND-window"), False, False, 0)
        other.add(box)
        other.set_default_size(300, 140)
        other.move(500, 300)
    other.show_all()
    # Focused, as a window manager would focus a newly opened window: the app's default window then.
    other.present()
    say("OPENED " + MODE)


def main():
    window = Gtk.Window(title="Doc")
    window.set_default_size(400, 240)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    box.pack_start(Gtk.Label(label="The main window"), False, False, 0)
    apply = apply_button("MAIN")
    opened = []

    def once(_button):
        if not opened:
            opened.append(True)
            open_other(window)

    apply.connect("clicked", once)
    box.pack_start(apply, False, False, 0)
    window.add(box)
    window.show_all()
    Gtk.main()


main()
