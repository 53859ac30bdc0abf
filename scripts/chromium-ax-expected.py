#!/usr/bin/python3
"""Chromium's accessibility tree of one page, as Chromium gives it over AT-SPI.

Run with Debian's interpreter (python3-pyatspi) on a desktop where Chromium
shows the page whose document is named TITLE:

    /usr/bin/python3 scripts/chromium-ax-expected.py TITLE [TIMEOUT_S]

Prints the page's tree in the notation of Chromium's own expected AT-SPI
trees (content/test/data/accessibility/*-expected-auralinux.txt): one line a
node, "++" a level, "[role] name='…'" then the states that matter to an agent.
It reads AT-SPI directly (pyatspi, not axsnap), so the files it writes under
test/pages/chromium-ax/ say what Chromium says, and axsnap is compared with
them (test/linux/chromium-ax.test.ts, bench/chromium-agreement.ts).
"""

import sys
import time

import pyatspi

# The states an agent acts on, named as Chromium's dump names them.
STATES = {
    pyatspi.STATE_CHECKED: "checked",
    pyatspi.STATE_PRESSED: "pressed",
    pyatspi.STATE_INDETERMINATE: "indeterminate",
    pyatspi.STATE_SELECTED: "selected",
    pyatspi.STATE_EXPANDED: "expanded",
    pyatspi.STATE_COLLAPSED: "collapsed",
    pyatspi.STATE_REQUIRED: "required",
    pyatspi.STATE_INVALID_ENTRY: "invalid-entry",
    pyatspi.STATE_EDITABLE: "editable",
    pyatspi.STATE_READ_ONLY: "read-only",
}


def find_document(acc, title, depth=0):
    if depth > 40 or acc is None:
        return None
    try:
        if acc.getRoleName() == "document web" and acc.name == title:
            return acc
        for child in acc:
            found = find_document(child, title, depth + 1)
            if found is not None:
                return found
    except Exception:
        return None
    return None


def line(acc, depth):
    role = acc.getRoleName()
    state = acc.getState()
    parts = ["++" * depth + "[" + role + "]"]
    if acc.name:
        parts.append("name='" + acc.name.replace("\n", " ") + "'")
    states = [label for s, label in STATES.items() if state.contains(s)]
    if not state.contains(pyatspi.STATE_ENABLED):
        states.append("disabled")
    parts.extend(states)
    return " ".join(parts)


def dump(acc, depth, out):
    out.append(line(acc, depth))
    for child in acc:
        if child is not None:
            dump(child, depth + 1, out)


def main():
    title = sys.argv[1]
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    until = time.time() + timeout
    while True:
        desktop = pyatspi.Registry.getDesktop(0)
        for app in desktop:
            if app is not None and "hromium" in (app.name or ""):
                doc = find_document(app, title)
                if doc is not None and doc.childCount > 0:
                    out = []
                    dump(doc, 0, out)
                    print("\n".join(out))
                    return 0
        if time.time() > until:
            sys.stderr.write("chromium-ax-expected: no document named %r\n" % title)
            return 1
        time.sleep(0.3)


sys.exit(main())
