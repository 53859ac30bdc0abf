#!/usr/bin/env python3
"""A GTK3 window whose X connection outlives its process: once the window is
shown, the process forks a child that keeps every descriptor (the X socket
included) and only waits. Killing the parent then leaves its windows on the X
server, still viewable and still marked with the dead parent's pid, for as long
as the child lives: what the X server shows for a moment after any app dies,
made to last, so a test can act on it deterministically.

With --unreaped the window is drawn by a child of this process, which never
reaps it: once killed, that child stays a zombie (its pid still in the process
table) beside the window the keeper keeps, as an app whose parent has not yet
collected its exit status is. With --reaped the child is drawn the same way
and reaped: its pid is free for the next process at once (a process group
leader's pid, as a plain start makes this one, is not free while the keeper
is in its group)."""
import os
import signal
import sys


def fork_keeper():
    if os.fork() == 0:
        # The child: no GTK calls, no exec (exec would close the X socket); just wait to be killed.
        while True:
            signal.pause()
    return False


def main():
    # Imported here, after any fork: GTK connects to the accessibility bus as it loads, and the registry knows an
    # app by the pid of the process that opened that connection.
    import gi

    gi.require_version("Gtk", "3.0")
    from gi.repository import GLib, Gtk

    window = Gtk.Window(title="axsnap orphan window")
    window.set_default_size(400, 200)
    window.move(60, 60)
    window.connect("destroy", Gtk.main_quit)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    window.add(box)
    box.pack_start(Gtk.Entry(), False, False, 0)
    window.show_all()
    GLib.timeout_add(300, fork_keeper)
    Gtk.main()


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode in ("--unreaped", "--reaped"):
        child = os.fork()
        if child != 0:
            # The parent: SIGCHLD left at its default, so without wait() a dead child stays a zombie.
            if mode == "--reaped":
                os.waitpid(child, 0)
            while True:
                signal.pause()
    main()
