#!/usr/bin/python3
"""A GTK3 form whose labels are tied to nothing (test/linux/labels.test.ts).

Unlike form-app.py, no label is the mnemonic widget's label, so AT-SPI
has no LABELLED_BY relation to read: a name can only be inferred from the
layout. In reading order:

- a grid: "Name" left of a text entry, "Copies" left of a spin button,
  "Volume" left of a slider;
- "Comments" just above a text entry;
- "Far label" at the left end of a row whose entry sits at the right end
  (must not be taken);
- a heading "Delivery" (ATK role heading) just above an entry (must not be
  taken);
- one row "From" entry "To" entry.

Runs with Debian's python3-gi and gir1.2-gtk-3.0; its AT-SPI name is
"axsnap-layout-form".
"""
import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-layout-form")
GLib.set_application_name("axsnap-layout-form")


def left(text):
    return Gtk.Label(label=text, halign=Gtk.Align.START)


def main():
    window = Gtk.Window(title="axsnap layout form")
    window.set_default_size(720, 420)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=14, margin=12)

    grid = Gtk.Grid(row_spacing=8, column_spacing=8)
    grid.attach(left("Name"), 0, 0, 1, 1)
    grid.attach(Gtk.Entry(), 1, 0, 1, 1)
    grid.attach(left("Copies"), 0, 1, 1, 1)
    grid.attach(Gtk.SpinButton.new_with_range(1, 10, 1), 1, 1, 1, 1)
    grid.attach(left("Volume"), 0, 2, 1, 1)
    volume = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
    volume.set_size_request(200, -1)
    grid.attach(volume, 1, 2, 1, 1)
    column.pack_start(grid, False, False, 0)

    above = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
    above.pack_start(left("Comments"), False, False, 0)
    above.pack_start(Gtk.Entry(), False, False, 0)
    column.pack_start(above, False, False, 0)

    far = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL)
    far.pack_start(left("Far label"), False, False, 0)
    far.pack_end(Gtk.Entry(), False, False, 0)
    column.pack_start(far, False, False, 0)

    delivery = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
    heading = left("Delivery")
    heading.get_accessible().set_role(Atk.Role.HEADING)
    delivery.pack_start(heading, False, False, 0)
    delivery.pack_start(Gtk.Entry(), False, False, 0)
    column.pack_start(delivery, False, False, 0)

    row = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=8)
    row.pack_start(left("From"), False, False, 0)
    row.pack_start(Gtk.Entry(width_chars=10), False, False, 0)
    row.pack_start(left("To"), False, False, 0)
    row.pack_start(Gtk.Entry(width_chars=10), False, False, 0)
    column.pack_start(row, False, False, 0)

    window.add(column)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
