#!/usr/bin/env python3
"""VLC for the tests (test/linux/vlc.test.ts): /usr/bin/vlc as is, except as root.

/usr/bin/vlc refuses to run as root ("VLC is not supposed to be run as root"),
and CI runs as root. As root this starts the same thing /usr/bin/vlc starts,
through libvlc (ctypes, the calls bin/vlc.c makes): libvlc_new with the
arguments, the interface asked for (--intf qt), the playlist played, and an
exit when the interface quits. The Qt interface, its widgets and its
accessibility are VLC's own.
"""
import ctypes
import os
import signal
import sys
import threading

if os.geteuid() != 0:
    os.execv("/usr/bin/vlc", ["vlc", *sys.argv[1:]])

libvlc = ctypes.CDLL("libvlc.so.5")
libvlc.libvlc_new.restype = ctypes.c_void_p
libvlc.libvlc_new.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
libvlc.libvlc_add_intf.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
libvlc.libvlc_playlist_play.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
EXIT = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
libvlc.libvlc_set_exit_handler.argtypes = [ctypes.c_void_p, EXIT, ctypes.c_void_p]
libvlc.libvlc_release.argtypes = [ctypes.c_void_p]

args = [a.encode() for a in sys.argv[1:]]
argv = (ctypes.c_char_p * len(args))(*args)
vlc = libvlc.libvlc_new(len(args), argv)
if not vlc:
    sys.exit("vlc.py: libvlc_new failed")
done = threading.Event()
on_exit = EXIT(lambda _: done.set())
libvlc.libvlc_set_exit_handler(vlc, on_exit, None)
signal.signal(signal.SIGTERM, lambda *_: done.set())
signal.signal(signal.SIGINT, lambda *_: done.set())
if libvlc.libvlc_add_intf(vlc, None) != 0:
    sys.exit("vlc.py: the interface did not start")
libvlc.libvlc_playlist_play(vlc, -1, 0, None)
while not done.wait(0.5):
    pass
libvlc.libvlc_release(vlc)
