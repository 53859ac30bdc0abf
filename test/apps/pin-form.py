#!/usr/bin/python3
"""A GTK3 form whose PIN entry is secure only by the label beside it, for
the secrets tests (test/linux/secrets.test.ts, issue 31 items 3).

Two plain entries (visibility on: the pixels show the digits), no name of
their own and no LABELLED_BY relation: "PIN:" left of the first, which holds
"4711", has keyboard focus and has all its text selected; "Name:" left of the
second. Nothing but the layout says the first holds a secret.

Every change of an entry's text is printed on stdout ("pin=..." or
"name=..."), so a test sees whether anything reached a field. Runs with
Debian's python3-gi and gir1.2-gtk-3.0; its AT-SPI name is
"axsnap-pin-form".
"""
import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-pin-form")
GLib.set_application_name("axsnap-pin-form")


def report(what):
    def changed(entry):
        print(f"{what}={entry.get_text()}", flush=True)

    return changed


def main():
    window = Gtk.Window(title="axsnap pin form")
    window.set_default_size(420, 160)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    grid = Gtk.Grid(row_spacing=8, column_spacing=8, margin=12)

    pin = Gtk.Entry(text="4711")
    grid.attach(Gtk.Label(label="PIN:", halign=Gtk.Align.START), 0, 0, 1, 1)
    grid.attach(pin, 1, 0, 1, 1)
    name = Gtk.Entry()
    grid.attach(Gtk.Label(label="Name:", halign=Gtk.Align.START), 0, 1, 1, 1)
    grid.attach(name, 1, 1, 1, 1)

    pin.connect("changed", report("pin"))
    name.connect("changed", report("name"))
    window.add(grid)
    # The test desktop has no window manager to give the window keyboard focus: it takes it itself
    # once mapped, and focus in the PIN entry selects its whole text, as a user tabbing into it would.
    window.connect("map-event", lambda w, _e: w.get_window().focus(Gdk.CURRENT_TIME))
    window.show_all()
    pin.grab_focus()
    Gtk.main()


if __name__ == "__main__":
    main()
