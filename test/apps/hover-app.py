#!/usr/bin/python3
"""A GTK3 window whose controls change when the pointer arrives, for issue
31's pointer tests (test/linux/hover.test.ts).

- A button "Keep", relabelled "Delete everything" on enter-notify and "Keep"
  again on leave-notify (the same widget, the same accessible object: only
  its name changes).
- A label "Archive" in an event box (a label has no press action, so a click
  by ref on it is pointer input at its centre), relabelled "Delete
  everything" while the pointer is over the box.
- A button "Park" far from both: a place for the pointer.
Each press is logged in the window title, "pressed <label> <n>" (n counts
them): the label as it read when the press came. Runs with Debian's
python3-gi and gir1.2-gtk-3.0; its AT-SPI name is "axsnap-hover-test".
"""
import gi

gi.require_version("Gtk", "3.0")
# Gdk too: with GTK 4's typelibs installed (gnome-shell brings them), an unversioned Gdk import loads 4.0.
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-hover-test")
GLib.set_application_name("axsnap-hover-test")


def main():
    window = Gtk.Window(title="axsnap hover")
    window.set_default_size(420, 320)
    window.move(1340, 40)
    window.connect("destroy", Gtk.main_quit)
    fixed = Gtk.Fixed()
    presses = {"n": 0}

    def pressed(label):
        presses["n"] += 1
        window.set_title(f"pressed {label} {presses['n']}")

    keep = Gtk.Button(label="Keep")
    # A fixed size: the longer label must not move the button out from under the pointer.
    keep.set_size_request(240, 48)

    def relabel(set_text, text):
        # In the crossing handler: done before a press that follows the crossing is handled.
        def handler(*_):
            set_text(text)
            return False

        return handler

    keep.connect("enter-notify-event", relabel(keep.set_label, "Delete everything"))
    keep.connect("leave-notify-event", relabel(keep.set_label, "Keep"))
    keep.connect("clicked", lambda *_: pressed(keep.get_label()))
    fixed.put(keep, 40, 40)

    box = Gtk.EventBox()
    box.set_size_request(240, 48)
    archive = Gtk.Label(label="Archive")
    box.add(archive)
    box.add_events(Gdk.EventMask.ENTER_NOTIFY_MASK | Gdk.EventMask.LEAVE_NOTIFY_MASK)
    box.connect("enter-notify-event", relabel(archive.set_text, "Delete everything"))
    box.connect("leave-notify-event", relabel(archive.set_text, "Archive"))

    def box_pressed(_widget, event):
        # Clicks in quick succession also bring a 2BUTTON_PRESS: a click is its plain press only.
        if event.type == Gdk.EventType.BUTTON_PRESS:
            pressed(archive.get_text())
        return True

    box.connect("button-press-event", box_pressed)
    fixed.put(box, 40, 130)

    park = Gtk.Button(label="Park")
    park.set_size_request(120, 40)
    fixed.put(park, 280, 250)

    window.add(fixed)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
