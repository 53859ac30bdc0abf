#!/usr/bin/python3
"""A GTK3 app with a nested menu, for axsnap's Wayland frame tests
(test/linux/wayland-popups.test.ts).

A menu bar "Notes" whose menu holds "New note" and a submenu "Recent" with
three items: on Wayland each open menu is a surface of its own (an
xdg_popup), the submenu's transient for the menu's. Choosing an item shows
it in a label. Its AT-SPI name is "axsnap-menus-test".
"""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-menus-test")
GLib.set_application_name("axsnap-menus-test")


def main():
    window = Gtk.Window(title="axsnap menus test")
    window.set_default_size(500, 300)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    window.add(box)
    status = Gtk.Label(label="Ready")

    def chosen(item):
        status.set_text("Chose " + item.get_label())

    bar = Gtk.MenuBar()
    top = Gtk.MenuItem(label="Notes")
    menu = Gtk.Menu()
    new = Gtk.MenuItem(label="New note")
    new.connect("activate", chosen)
    menu.append(new)
    recent = Gtk.MenuItem(label="Recent")
    submenu = Gtk.Menu()
    for label in ("Shopping list", "Meeting notes", "Ideas"):
        item = Gtk.MenuItem(label=label)
        item.connect("activate", chosen)
        submenu.append(item)
    recent.set_submenu(submenu)
    menu.append(recent)
    top.set_submenu(menu)
    bar.append(top)
    box.pack_start(bar, False, False, 0)
    box.pack_start(status, False, False, 0)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
