#!/usr/bin/python3
"""A GTK3 app whose button, menu item and keyboard shortcut each run a modal
dialog with gtk_dialog_run (a nested main loop), for issue 32's modal tests
(test/linux/modal.test.ts).

GTK 3 runs an AT-SPI action inside the accessibility bridge's D-Bus
dispatch, so a dialog run from a handler that an action started holds the
app's whole accessibility until it closes. The dialog "Name the note" has an
entry and OK/Cancel; OK writes the entry's text to the file given as the
first argument and shows "Saved: <text>" in the window. Runs with Debian's
python3-gi and gir1.2-gtk-3.0; its AT-SPI name is "axsnap-modal-test".
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-modal-test")
GLib.set_application_name("axsnap-modal-test")


def main():
    out = sys.argv[1]
    window = Gtk.Window(title="axsnap modal test")
    window.set_default_size(480, 320)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    window.add(box)
    status = Gtk.Label(label="Nothing saved")

    def run_dialog(*_):
        dialog = Gtk.Dialog(title="Name the note", transient_for=window, modal=True)
        dialog.add_button("Cancel", Gtk.ResponseType.CANCEL)
        dialog.add_button("OK", Gtk.ResponseType.OK)
        dialog.set_default_response(Gtk.ResponseType.OK)
        entry = Gtk.Entry()
        entry.set_activates_default(True)
        dialog.get_content_area().add(Gtk.Label(label="Note name:"))
        dialog.get_content_area().add(entry)
        dialog.set_default_size(320, 160)
        dialog.show_all()
        response = dialog.run()
        text = entry.get_text()
        dialog.destroy()
        if response == Gtk.ResponseType.OK:
            with open(out, "w") as f:
                f.write(text)
            status.set_text("Saved: " + text)
        else:
            status.set_text("Cancelled")
        return True

    bar = Gtk.MenuBar()
    top = Gtk.MenuItem(label="Note")
    menu = Gtk.Menu()
    item = Gtk.MenuItem(label="Name note...")
    item.connect("activate", run_dialog)
    menu.append(item)
    top.set_submenu(menu)
    bar.append(top)
    box.pack_start(bar, False, False, 0)

    button = Gtk.Button(label="Name it")
    button.connect("clicked", run_dialog)
    box.pack_start(button, False, False, 0)
    box.pack_start(status, False, False, 0)

    accel = Gtk.AccelGroup()
    window.add_accel_group(accel)
    key, mods = Gtk.accelerator_parse("<Control>n")
    accel.connect(key, mods, Gtk.AccelFlags.VISIBLE, lambda *_: run_dialog())

    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
