# A Tk window for test/linux/x11-apps.test.ts: Tk has no AT-SPI bridge, so
# axsnap sees only its X window. Widgets are placed at fixed pixels so a
# test can click them by position. argv: the file a click on "Press me"
# writes to.
set out [lindex $argv 0]
wm title . "axsnap tk test"
wm geometry . 320x200+20+20
label .status -text "not pressed"
button .press -text "Press me" -command {
  .status configure -text "pressed"
  set f [open $out w]
  puts $f "pressed"
  close $f
}
place .press -x 20 -y 20 -width 140 -height 50
place .status -x 20 -y 100 -width 200 -height 30
