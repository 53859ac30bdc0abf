#!/usr/bin/python3
"""A GTK3 window whose text is drawn with cairo on a DrawingArea, for the OCR
tests and benchmark (test/linux/ocr-engine.test.ts, bench/ocr.ts): the
accessibility tree has the window and the drawing area, and no text at all.

The argument is a JSON object:
  {"title": str, "width": int, "height": int, "x": int?, "y": int? (window position),
   "lines": [{"text": str, "x": int, "y": int, "size": float?, "font": str?, "box": bool?, "hover": str?}]}
Each line is drawn at (x, y) (the text's baseline, drawing-area pixels) in
`font` (default "Sans") at `size` (default 14), black on white; `box` draws a
button-like rectangle around it, and a click inside that rectangle sets the
window title to "clicked <text> <n>" (n counts the clicks), so a test sees
what a click hit. SIGUSR1 redraws the first boxed line with its text
reversed ("Play" → "yalP"): the label changes between a snapshot and a click.
A boxed line with `"hover": str` shows that text instead (its box fitted to
it) while the pointer is inside its box, as drawn; a click then names the
text it shows, as its meaning changed when the pointer arrived.
Runs with Debian's python3-gi,
gir1.2-gtk-3.0 and python3-gi-cairo; its AT-SPI name is "axsnap-drawn-text".
"""
import json
import signal
import sys

import gi

gi.require_version("Gtk", "3.0")
# Gdk too: with GTK 4's typelibs installed (gnome-shell brings them), an unversioned Gdk import loads 4.0.
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-drawn-text")
GLib.set_application_name("axsnap-drawn-text")


def main():
    spec = json.loads(sys.argv[1])
    lines = spec["lines"]

    boxes = []  # (x0, y0, x1, y1, line) of the boxed lines, as last drawn
    clicks = {"n": 0}
    hovered = {"line": None}  # the boxed line the pointer is in, as last moved

    def shown(line):
        return line["hover"] if hovered["line"] is line and "hover" in line else line["text"]

    def draw(_widget, cr):
        boxes.clear()
        cr.set_source_rgb(1, 1, 1)
        cr.paint()
        cr.set_source_rgb(0, 0, 0)
        for line in lines:
            cr.select_font_face(line.get("font", "Sans"))
            cr.set_font_size(line.get("size", 14))
            text = shown(line)
            if line.get("box"):
                extents = cr.text_extents(text)
                cr.set_line_width(1)
                x0, y0 = line["x"] - 12, line["y"] - extents.height - 10
                w, h = extents.x_advance + 24, extents.height + 20
                cr.rectangle(x0, y0, w, h)
                cr.stroke()
                boxes.append((x0, y0, x0 + w, y0 + h, line))
            cr.move_to(line["x"], line["y"])
            cr.show_text(text)
        return False

    window = Gtk.Window(title=spec.get("title", "axsnap drawn text"))
    window.move(spec.get("x", 20), spec.get("y", 20))
    window.connect("destroy", Gtk.main_quit)
    area = Gtk.DrawingArea()
    area.set_size_request(spec.get("width", 520), spec.get("height", 400))
    area.connect("draw", draw)
    area.add_events(
        Gdk.EventMask.BUTTON_PRESS_MASK
        | Gdk.EventMask.POINTER_MOTION_MASK
        | Gdk.EventMask.ENTER_NOTIFY_MASK
        | Gdk.EventMask.LEAVE_NOTIFY_MASK
    )

    def pressed(_widget, event):
        # Clicks in quick succession also bring a 2BUTTON_PRESS: a click is its plain press only.
        if event.type != Gdk.EventType.BUTTON_PRESS:
            return True
        for x0, y0, x1, y1, line in boxes:
            if x0 <= event.x <= x1 and y0 <= event.y <= y1:
                clicks["n"] += 1
                window.set_title(f"clicked {shown(line)} {clicks['n']}")
        return True

    def hover(line):
        if hovered["line"] is not line:
            hovered["line"] = line
            area.queue_draw()

    def moved(_widget, event):
        at = [line for x0, y0, x1, y1, line in boxes if x0 <= event.x <= x1 and y0 <= event.y <= y1]
        hover(at[0] if at else None)
        return False

    area.connect("button-press-event", pressed)
    area.connect("motion-notify-event", moved)
    area.connect("enter-notify-event", moved)
    area.connect("leave-notify-event", lambda *_: hover(None))

    def redraw():
        boxed = next((line for line in lines if line.get("box")), None)
        if boxed is not None:
            boxed["text"] = boxed["text"][::-1]
            area.queue_draw()
        return GLib.SOURCE_CONTINUE

    # In the GLib main loop: a Python signal handler would wait for the interpreter to wake.
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, redraw)
    window.add(area)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
