#!/usr/bin/python3
"""A small GTK3 app for axsnap's window tests (test/linux/windows.test.ts).

A menu bar (File, View), a combo box whose choice shows in a label, a button
that opens a modal dialog of the app itself, and one that spawns zenity (a
dialog of another process). Runs with Debian's python3-gi and gir1.2-gtk-3.0
(scripts/install-deps.sh); its AT-SPI name is "axsnap-windows-test".
"""
import subprocess

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-windows-test")
GLib.set_application_name("axsnap-windows-test")


def on_dialog(_button, window, status):
    dialog = Gtk.Dialog(title="Note settings", transient_for=window, modal=True)
    dialog.add_button("Close settings", Gtk.ResponseType.CLOSE)
    dialog.get_content_area().add(Gtk.Label(label="Settings of the note"))
    dialog.set_default_size(320, 160)
    dialog.show_all()

    def done(d, _response):
        status.set_text("Dialog closed")
        d.destroy()

    dialog.connect("response", done)


def on_zenity(_button):
    subprocess.Popen(["zenity", "--info", "--title", "Zenity note", "--text", "Hello from zenity"])


def on_menu(item, status):
    status.set_text("Menu: " + item.get_label())


def main():
    window = Gtk.Window(title="axsnap windows test")
    window.set_default_size(600, 400)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    window.add(box)
    status = Gtk.Label(label="Ready")

    bar = Gtk.MenuBar()
    for title, items in (("File", ("New note", "Open note")), ("View", ("Zoom in", "Zoom out"))):
        top = Gtk.MenuItem(label=title)
        menu = Gtk.Menu()
        for label in items:
            item = Gtk.MenuItem(label=label)
            item.connect("activate", on_menu, status)
            menu.append(item)
        top.set_submenu(menu)
        bar.append(top)
    box.pack_start(bar, False, False, 0)

    combo = Gtk.ComboBoxText()
    for color in ("Red", "Green", "Blue"):
        combo.append_text(color)
    combo.set_active(0)
    chosen = Gtk.Label(label="Chosen: Red")
    combo.connect("changed", lambda c: chosen.set_text("Chosen: " + c.get_active_text()))
    box.pack_start(combo, False, False, 0)
    box.pack_start(chosen, False, False, 0)

    dialog_button = Gtk.Button(label="Open dialog")
    dialog_button.connect("clicked", on_dialog, window, status)
    box.pack_start(dialog_button, False, False, 0)
    zenity_button = Gtk.Button(label="Run zenity")
    zenity_button.connect("clicked", on_zenity)
    box.pack_start(zenity_button, False, False, 0)
    box.pack_start(status, False, False, 0)

    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
