#!/usr/bin/python3
"""A GTK3 app for the locator tests (test/linux/locate.test.ts), whose
changes the test drives through its own buttons, so each is deterministic.

The window "axsnap locate" has a frame "Actions" (the push buttons "Save",
"Store" and "Rename save") and a frame "More" (a second "Save"), the push
buttons "Open details" (opens the dialog "Details", with "Close", two
seconds later: a dialog that opens after the action) and "Move window"
(moves and resizes the window), and the label "Status: idle". "Save" in
"Actions" sets the label to "Status: saved"; "Rename save" renames that
button "Saved" (an element that changed between locate and act). Runs with
Debian's python3-gi and gir1.2-gtk-3.0; its AT-SPI name is
"axsnap-locate-test".
"""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-locate-test")
GLib.set_application_name("axsnap-locate-test")


def main():
    window = Gtk.Window(title="axsnap locate")
    window.set_default_size(480, 360)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
    window.add(box)
    status = Gtk.Label(label="Status: idle")

    actions = Gtk.Frame(label="Actions")
    inner = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=4)
    actions.add(inner)
    save = Gtk.Button(label="Save")
    save.connect("clicked", lambda *_: status.set_text("Status: saved"))
    inner.pack_start(save, False, False, 0)
    inner.pack_start(Gtk.Button(label="Store"), False, False, 0)
    rename = Gtk.Button(label="Rename save")
    rename.connect("clicked", lambda *_: save.set_label("Saved"))
    inner.pack_start(rename, False, False, 0)
    box.pack_start(actions, False, False, 0)

    more = Gtk.Frame(label="More")
    more.add(Gtk.Button(label="Save"))
    box.pack_start(more, False, False, 0)

    def open_details(*_):
        def show():
            dialog = Gtk.Dialog(title="Details", transient_for=window)
            dialog.add_button("Close", Gtk.ResponseType.CLOSE)
            dialog.get_content_area().add(Gtk.Label(label="Nothing to see"))
            dialog.connect("response", lambda d, _r: d.destroy())
            dialog.set_default_size(240, 120)
            dialog.show_all()
            return False

        GLib.timeout_add(2000, show)

    details = Gtk.Button(label="Open details")
    details.connect("clicked", open_details)
    box.pack_start(details, False, False, 0)

    def move(*_):
        window.move(300, 220)
        window.resize(720, 500)

    mover = Gtk.Button(label="Move window")
    mover.connect("clicked", move)
    box.pack_start(mover, False, False, 0)
    box.pack_start(status, False, False, 0)

    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
