#!/usr/bin/python3
"""A GTK3 window that shows every kind of input it gets, for the agent's
desktop test (test/linux/agent-desktop.test.ts): a label with no action
("Click here": a click on it can only be pointer input), a drag pad (a
drawing area that reports where a button went down and came up), a text
entry with keyboard focus, and a status line per kind: "clicks: N",
"drag: DX,DY", "last key: NAME". Its AT-SPI name is "axsnap-input-test";
the window title is argv[1] (default "axsnap input").
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-input-test")
GLib.set_application_name("axsnap-input-test")


def main():
    title = sys.argv[1] if len(sys.argv) > 1 else "axsnap input"
    window = Gtk.Window(title=title)
    window.set_default_size(460, 360)
    window.move(60, 60)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8, margin=12)

    clicks = Gtk.Label(label="clicks: 0")
    count = [0]

    def clicked(_widget, event):
        if event.type == Gdk.EventType.BUTTON_PRESS and event.button == 1:
            count[0] += 1
            clicks.set_text(f"clicks: {count[0]}")
        return False

    target = Gtk.EventBox()
    target.add(Gtk.Label(label="Click here"))
    target.set_size_request(200, 40)
    target.connect("button-press-event", clicked)
    box.pack_start(target, False, False, 0)
    box.pack_start(clicks, False, False, 0)

    drag = Gtk.Label(label="drag: none")
    pad = Gtk.DrawingArea()
    pad.set_size_request(400, 120)
    pad.get_accessible().set_name("Drag pad")
    pad.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK)
    down = [None]

    def pressed(_widget, event):
        down[0] = (event.x, event.y)
        return True

    def released(_widget, event):
        if down[0] is not None:
            dx = round(event.x - down[0][0])
            dy = round(event.y - down[0][1])
            drag.set_text(f"drag: {dx},{dy}")
        return True

    pad.connect("button-press-event", pressed)
    pad.connect("button-release-event", released)
    box.pack_start(pad, False, False, 0)
    box.pack_start(drag, False, False, 0)

    entry = Gtk.Entry()
    entry.get_accessible().set_name("Typed")
    box.pack_start(entry, False, False, 0)
    last_key = Gtk.Label(label="last key: none")
    box.pack_start(last_key, False, False, 0)

    def key(_widget, event):
        last_key.set_text(f"last key: {Gdk.keyval_name(event.keyval)}")
        return False

    window.connect("key-press-event", key)
    window.add(box)
    window.show_all()
    entry.grab_focus()
    Gtk.main()


if __name__ == "__main__":
    main()
