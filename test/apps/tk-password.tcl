# A Tk sign-in window for test/linux/secrets.test.ts (issue 31, item 4): Tk
# has no AT-SPI bridge, so axsnap sees only its X window and the text of its
# pixels. The drawn text "Password:" sits left of an entry that shows `*`
# for each character, and that entry has Tk's keyboard focus. Every change
# of the entry's text is printed on stdout ("value=..."), so a test sees
# whether anything reached it.
wm title . "axsnap tk sign in"
wm geometry . 360x120+20+20
set secret ""
label .label -text "Password:" -font {Helvetica 14}
entry .pw -show * -textvariable secret -font {Helvetica 14}
place .label -x 20 -y 40 -width 120 -height 30
place .pw -x 150 -y 40 -width 180 -height 30
trace add variable secret write {apply {{args} {
  global secret
  puts "value=$secret"
  flush stdout
}}}
# No window manager on the test desktop gives the window keyboard focus: it takes it itself.
tkwait visibility .pw
focus -force .pw
puts "ready"
flush stdout
