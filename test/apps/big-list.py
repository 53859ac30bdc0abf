#!/usr/bin/python3
"""A GTK3 window with a huge list, for axsnap's big-list tests and bench.

A GtkTreeView of N rows (default 10,000; --rows N) with three columns
("Name", "Size", "Kind"): row i reads "Item i", "<i*7 % 1000> KB" and
"even"/"odd". Above the list a search entry and a "Refresh" button, below it
a status label and an "Apply" button, so a test can check that the rest of
the window still prints when the list is huge. --select K selects row K and
scrolls to it. Its AT-SPI name is "axsnap-big-list"; the window title is
"axsnap big list". Runs with Debian's python3-gi and gir1.2-gtk-3.0.
"""
import argparse

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-big-list")
GLib.set_application_name("axsnap-big-list")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--select", type=int, default=-1)
    args = parser.parse_args()

    window = Gtk.Window(title="axsnap big list")
    window.set_default_size(520, 420)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=8)

    top = Gtk.Box(spacing=6)
    search = Gtk.SearchEntry()
    search.set_placeholder_text("Filter items")
    top.pack_start(search, True, True, 0)
    top.pack_start(Gtk.Button(label="Refresh"), False, False, 0)
    box.pack_start(top, False, False, 0)

    store = Gtk.ListStore(str, str, str)
    for i in range(args.rows):
        store.append([f"Item {i}", f"{i * 7 % 1000} KB", "even" if i % 2 == 0 else "odd"])
    view = Gtk.TreeView(model=store)
    for col, title in enumerate(["Name", "Size", "Kind"]):
        view.append_column(Gtk.TreeViewColumn(title, Gtk.CellRendererText(), text=col))
    scroller = Gtk.ScrolledWindow()
    scroller.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.AUTOMATIC)
    scroller.add(view)
    box.pack_start(scroller, True, True, 0)

    bottom = Gtk.Box(spacing=6)
    status = Gtk.Label(label=f"{args.rows} items")
    bottom.pack_start(status, True, True, 0)
    bottom.pack_start(Gtk.Button(label="Apply"), False, False, 0)
    box.pack_start(bottom, False, False, 0)

    if 0 <= args.select < args.rows:
        path = Gtk.TreePath.new_from_indices([args.select])
        view.get_selection().select_path(path)
        GLib.idle_add(lambda: view.scroll_to_cell(path, None, True, 0.0, 0.0) and False)

    window.add(box)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
