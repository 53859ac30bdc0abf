#!/usr/bin/python3
"""A small GTK3 form for axsnap's name tests (test/linux/names.test.ts).

Fields named only by the labels beside them (gtk_label_set_mnemonic_widget,
which GTK exposes as AT-SPI LABELLED_BY / LABEL_FOR): a text entry "User
name", a password entry "Password" (its label after it, as zenity lays out
a form) and a spin button "Copies" with a hint label that describes it
(DESCRIBED_BY). Runs with Debian's python3-gi and gir1.2-gtk-3.0; its AT-SPI
name is "axsnap-form-test". The "Sign in" button has the AccessibleId "sign-in".
"""
import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, GLib, Gtk  # noqa: E402

GLib.set_prgname("axsnap-form-test")
GLib.set_application_name("axsnap-form-test")


def main():
    window = Gtk.Window(title="axsnap form")
    window.set_default_size(420, 220)
    window.move(40, 40)
    window.connect("destroy", Gtk.main_quit)
    grid = Gtk.Grid(row_spacing=8, column_spacing=8, margin=12)

    user_label = Gtk.Label(label="User name")
    user = Gtk.Entry()
    user_label.set_mnemonic_widget(user)
    grid.attach(user_label, 0, 0, 1, 1)
    grid.attach(user, 1, 0, 1, 1)

    password = Gtk.Entry(visibility=False)
    password_label = Gtk.Label(label="Password")
    password_label.set_mnemonic_widget(password)
    grid.attach(password, 1, 1, 1, 1)
    grid.attach(password_label, 0, 1, 1, 1)

    copies_label = Gtk.Label(label="Copies")
    copies = Gtk.SpinButton.new_with_range(1, 10, 1)
    copies_label.set_mnemonic_widget(copies)
    hint = Gtk.Label(label="How many to print")
    copies.get_accessible().add_relationship(Atk.RelationType.DESCRIBED_BY, hint.get_accessible())
    grid.attach(copies_label, 0, 2, 1, 1)
    grid.attach(copies, 1, 2, 1, 1)
    grid.attach(hint, 1, 3, 1, 1)

    sign_in = Gtk.Button(label="Sign in")
    # An AT-SPI AccessibleId (ATK 2.34+), as Qt and GTK4 apps give their widgets.
    sign_in.get_accessible().set_accessible_id("sign-in")
    grid.attach(sign_in, 1, 4, 1, 1)
    window.add(grid)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
