#!/usr/bin/python3
"""Two GTK3 tree views whose selection the rows test controls
(test/linux/chooser.test.ts): "Fixed" takes no selection (mode NONE, so
its Table.AddRowSelection refuses), "Multi" takes several rows (mode
MULTIPLE, "one" and "two" selected at start). Each row activation prints
"activated <list> <row>" on stdout, so a test sees which row was activated,
and whether any was. Runs with Debian's python3-gi and gir1.2-gtk-3.0; its
AT-SPI name is "axsnap-rows-test".
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-rows-test")
GLib.set_application_name("axsnap-rows-test")


def tree(name, rows, mode):
    store = Gtk.ListStore(str, str)
    for i, row in enumerate(rows):
        store.append([row, f"{i + 1} KB"])
    view = Gtk.TreeView(model=store)
    view.get_accessible().set_name(name)
    for col, title in enumerate(["Name", "Size"]):
        view.append_column(Gtk.TreeViewColumn(title, Gtk.CellRendererText(), text=col))
    view.get_selection().set_mode(mode)

    def activated(_view, path, _column):
        print(f"activated {name} {store[path][0]}", flush=True)

    view.connect("row-activated", activated)
    return view, store


def main():
    window = Gtk.Window(title="axsnap rows")
    window.set_default_size(520, 320)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(spacing=12, margin=12, homogeneous=True)
    fixed, _ = tree("Fixed", ["alpha", "bravo", "charlie", "delta", "echo"], Gtk.SelectionMode.NONE)
    multi, store = tree("Multi", ["one", "two", "three", "four", "five"], Gtk.SelectionMode.MULTIPLE)
    multi.get_selection().select_path(Gtk.TreePath.new_from_indices([0]))
    multi.get_selection().select_path(Gtk.TreePath.new_from_indices([1]))
    box.pack_start(fixed, True, True, 0)
    box.pack_start(multi, True, True, 0)
    window.add(box)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
