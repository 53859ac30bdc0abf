#!/usr/bin/python3
"""A GTK3 window for the warm-process parity test
(test/doors/cli-daemon-parity.test.ts): one widget for each kind of CLI
action, and a state the test can put back exactly, so the same command run
twice (by the warm process, then in a process of its own) starts from the
same app both times.

Widgets: a check box "Option", a button "Count" with a label "count: N", an
entry "Name", a spin button "Amount", and a scrolled list of 40 rows.
SIGUSR1 puts everything back (unchecked, 0, empty, 0, scrolled to the top,
focus in the entry, pointer in the screen's corner), then, once GTK is idle,
writes the number of resets so far to the file argv[2] names: the test
waits for it before the next command. argv[1] names the app (its AT-SPI
name and its title; default "axsnap-parity-test").
"""
import os
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

NAME = sys.argv[1] if len(sys.argv) > 1 else "axsnap-parity-test"
ACK = sys.argv[2] if len(sys.argv) > 2 else None
GLib.set_prgname(NAME)
GLib.set_application_name(NAME)


def main():
    window = Gtk.Window(title=NAME)
    window.set_default_size(420, 420)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=10)

    option = Gtk.CheckButton(label="Option")
    box.pack_start(option, False, False, 0)

    count = [0]
    shown = Gtk.Label(label="count: 0")
    button = Gtk.Button(label="Count")

    def counted(_button):
        count[0] += 1
        shown.set_text(f"count: {count[0]}")

    button.connect("clicked", counted)
    row = Gtk.Box(spacing=6)
    row.pack_start(button, False, False, 0)
    row.pack_start(shown, False, False, 0)
    box.pack_start(row, False, False, 0)

    name_row = Gtk.Box(spacing=6)
    name_label = Gtk.Label(label="Name")
    entry = Gtk.Entry()
    name_label.set_mnemonic_widget(entry)
    name_row.pack_start(name_label, False, False, 0)
    name_row.pack_start(entry, True, True, 0)
    box.pack_start(name_row, False, False, 0)

    amount_row = Gtk.Box(spacing=6)
    amount_label = Gtk.Label(label="Amount")
    amount = Gtk.SpinButton.new_with_range(0, 100, 1)
    amount_label.set_mnemonic_widget(amount)
    amount_row.pack_start(amount_label, False, False, 0)
    amount_row.pack_start(amount, False, False, 0)
    box.pack_start(amount_row, False, False, 0)

    rows = Gtk.ListBox()
    for i in range(1, 41):
        rows.add(Gtk.Label(label=f"Row {i}", xalign=0))
    scrolled = Gtk.ScrolledWindow()
    scrolled.set_size_request(-1, 200)
    scrolled.add(rows)
    box.pack_start(scrolled, True, True, 0)

    window.add(box)
    resets = [0]

    def acknowledge():
        if ACK:
            with open(ACK + ".tmp", "w") as f:
                f.write(str(resets[0]))
            os.replace(ACK + ".tmp", ACK)
        return GLib.SOURCE_REMOVE

    def reset():
        option.set_active(False)
        count[0] = 0
        shown.set_text("count: 0")
        entry.set_text("")
        amount.set_value(0)
        scrolled.get_vadjustment().set_value(0)
        rows.unselect_all()
        window.present()
        entry.grab_focus()
        pointer = Gdk.Display.get_default().get_default_seat().get_pointer()
        pointer.warp(window.get_screen(), 0, 0)
        resets[0] += 1
        GLib.idle_add(acknowledge, priority=GLib.PRIORITY_LOW)
        return GLib.SOURCE_CONTINUE

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, reset)
    window.show_all()
    entry.grab_focus()
    Gtk.main()


if __name__ == "__main__":
    main()
