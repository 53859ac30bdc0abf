#!/usr/bin/python3
"""A GTK3 app that drifts between runs on purpose, for replay's drift tests
(test/linux/trace-drift.test.ts, issue 34).

The base window "axsnap drift" has a frame "Actions" (AT-SPI: a panel)
holding the check box "Subscribe", an entry labelled "Name:", the push
button "Save" (which sets the label "Status: idle" to "Status: saved
<name>") and the push button "Details" (which opens the dialog "Details"
with a "Close" button). `--variant V` changes one thing:

  base       as above
  renamed    "Save" is called "Store"
  duplicate  a second frame "More" holds another "Save"
  reordered  "Help" and "Reset" come first in the frame, the rest in reverse order
  moved      the window sits at 700,400 and is 640x480
  noeffect   "Save" does nothing
  late       "Save" is disabled until 1.5 s after the name last changed (a control
             the app enables late, as GTK's file chooser enables its Save)

Runs with Debian's python3-gi and gir1.2-gtk-3.0; its AT-SPI name is
"axsnap-drift-test".
"""
import argparse

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-drift-test")
GLib.set_application_name("axsnap-drift-test")

VARIANTS = ["base", "renamed", "duplicate", "reordered", "moved", "noeffect", "late"]
LATE_MS = 1500


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=VARIANTS, default="base")
    variant = parser.parse_args().variant

    window = Gtk.Window(title="axsnap drift")
    if variant == "moved":
        window.set_default_size(640, 480)
        window.move(700, 400)
    else:
        window.set_default_size(420, 320)
        window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8, margin=12)
    window.add(outer)

    status = Gtk.Label(label="Status: idle")

    frame = Gtk.Frame(label="Actions")
    inner = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=8)
    frame.add(inner)

    subscribe = Gtk.CheckButton(label="Subscribe")

    name_row = Gtk.Box(spacing=6)
    name_label = Gtk.Label(label="Name:")
    entry = Gtk.Entry()
    name_label.set_mnemonic_widget(entry)
    # The entry's name comes from this label (LABELLED_BY), as a dialog's fields usually do.
    entry.get_accessible().add_relationship(Atk.RelationType.LABELLED_BY, name_label.get_accessible())
    name_row.pack_start(name_label, False, False, 0)
    name_row.pack_start(entry, True, True, 0)

    save = Gtk.Button(label="Store" if variant == "renamed" else "Save")

    def on_save(_button):
        if variant != "noeffect":
            status.set_text("Status: saved " + entry.get_text())

    save.connect("clicked", on_save)

    if variant == "late":
        save.set_sensitive(False)
        pending = {"id": 0}

        def enable_later(_entry):
            save.set_sensitive(False)
            if pending["id"]:
                GLib.source_remove(pending["id"])

            def enable():
                pending["id"] = 0
                save.set_sensitive(True)
                return GLib.SOURCE_REMOVE

            pending["id"] = GLib.timeout_add(LATE_MS, enable)

        entry.connect("changed", enable_later)

    details = Gtk.Button(label="Details")

    def on_details(_button):
        # Shown, not run: a nested main loop inside an AT-SPI action would hold the app's accessibility.
        dialog = Gtk.Dialog(title="Details", transient_for=window)
        dialog.get_content_area().add(Gtk.Label(label="Subscribed: " + ("yes" if subscribe.get_active() else "no")))
        dialog.add_button("Close", Gtk.ResponseType.CLOSE)
        dialog.connect("response", lambda d, _r: d.destroy())
        dialog.set_default_size(240, 120)
        dialog.show_all()

    details.connect("clicked", on_details)

    widgets = [subscribe, name_row, save, details]
    if variant == "reordered":
        widgets = [Gtk.Button(label="Help"), Gtk.Button(label="Reset")] + list(reversed(widgets))
    for w in widgets:
        inner.pack_start(w, False, False, 0)
    outer.pack_start(frame, False, False, 0)

    if variant == "duplicate":
        more = Gtk.Frame(label="More")
        more_box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, margin=8)
        more_box.pack_start(Gtk.Button(label="Save"), False, False, 0)
        more.add(more_box)
        outer.pack_start(more, False, False, 0)

    outer.pack_start(status, False, False, 0)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
