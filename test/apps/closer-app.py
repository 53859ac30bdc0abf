#!/usr/bin/python3
"""A small GTK3 app for axsnap's reply tests (test/linux/replies-effect.test.ts).

Its main window "axsnap closer test" has a check box "Remember me", a button
"Open Save As" that opens a non-modal dialog titled "Save As" (whose button
"Close dialog" destroys that dialog, so the app's other window stays), and a
button "Quit app" that ends the process. The dialog also has "Quit from
dialog", so the window acted on and the app go away together. Runs with
Debian's python3-gi and gir1.2-gtk-3.0 (scripts/install-deps.sh); its AT-SPI
name is "axsnap-closer-test".
"""
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-closer-test")
GLib.set_application_name("axsnap-closer-test")


def quit_now(_button):
    # Exit at once, as an app's Quit does: no window is left to read.
    sys.stdout.flush()
    Gtk.main_quit()


DIALOGS = []


def close_dialogs():
    while DIALOGS:
        DIALOGS.pop().destroy()
    return GLib.SOURCE_CONTINUE


def on_dialog(_button, window, status):
    dialog = Gtk.Window(title="Save As", transient_for=window)
    DIALOGS.append(dialog)
    dialog.connect("destroy", lambda d: d in DIALOGS and DIALOGS.remove(d))
    dialog.set_default_size(320, 160)
    dialog.move(120, 120)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    dialog.add(box)
    box.pack_start(Gtk.Label(label="Where to save the note"), False, False, 0)
    close = Gtk.Button(label="Close dialog")

    def done(_b):
        status.set_text("Dialog closed")
        dialog.destroy()

    close.connect("clicked", done)
    box.pack_start(close, False, False, 0)
    quit_button = Gtk.Button(label="Quit from dialog")
    quit_button.connect("clicked", quit_now)
    box.pack_start(quit_button, False, False, 0)
    dialog.show_all()


def main():
    window = Gtk.Window(title="axsnap closer test")
    window.set_default_size(480, 300)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    window.add(box)
    status = Gtk.Label(label="Ready")
    box.pack_start(Gtk.CheckButton(label="Remember me"), False, False, 0)
    dialog_button = Gtk.Button(label="Open Save As")
    dialog_button.connect("clicked", on_dialog, window, status)
    box.pack_start(dialog_button, False, False, 0)
    quit_button = Gtk.Button(label="Quit app")
    quit_button.connect("clicked", quit_now)
    box.pack_start(quit_button, False, False, 0)
    box.pack_start(status, False, False, 0)
    window.show_all()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, close_dialogs)
    Gtk.main()


if __name__ == "__main__":
    main()
