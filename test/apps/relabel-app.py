#!/usr/bin/python3
"""A GTK3 window whose entry is named by a label the app re-creates, for the
handle leak test (test/linux/handles.test.ts).

The entry sits near the top (window > grid > entry); its label lies four
levels down (grid > box > box > box > label), so a snapshot with maxDepth 3
reads the entry, and the label's name through the entry's LABELLED_BY
relation, without ever walking to the label. Each SIGUSR1 destroys the label
and makes a new one, "Field <n>" (a new accessible object, a new AT-SPI
path), tied to the entry as the old one was. Runs with Debian's python3-gi
and gir1.2-gtk-3.0; its AT-SPI name is "axsnap-relabel-test".
"""
import signal

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-relabel-test")
GLib.set_application_name("axsnap-relabel-test")


def main():
    window = Gtk.Window(title="axsnap relabel")
    window.set_default_size(360, 160)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    grid = Gtk.Grid(row_spacing=8, column_spacing=8, margin=12)
    entry = Gtk.Entry()
    grid.attach(entry, 1, 0, 1, 1)
    holder = Gtk.Box()
    outer = Gtk.Box()
    middle = Gtk.Box()
    outer.add(middle)
    middle.add(holder)
    grid.attach(outer, 0, 0, 1, 1)
    window.add(grid)

    state = {"n": 0, "label": None}

    def relabel():
        old = state["label"]
        if old is not None:
            # The relation goes with the label: the entry is named by the new one only.
            entry.get_accessible().remove_relationship(Atk.RelationType.LABELLED_BY, old.get_accessible())
            old.destroy()
        state["n"] += 1
        label = Gtk.Label(label=f"Field {state['n']}")
        label.set_mnemonic_widget(entry)
        entry.get_accessible().add_relationship(Atk.RelationType.LABELLED_BY, label.get_accessible())
        holder.add(label)
        label.show()
        state["label"] = label
        return GLib.SOURCE_CONTINUE

    relabel()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, relabel)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
