#!/usr/bin/python3
"""Baseline for bench/linux-snapshot: a full pyatspi walk of an app's first window.

Run with Debian's interpreter (python3-pyatspi is a Debian package):

    /usr/bin/python3 bench/pyatspi_walk.py APP_NAME [RUNS] [--warm] [--dump FILE]

Finds APP_NAME among the desktop's applications, takes its first window
(frame), and walks it depth-first, reading for every node: role name, name,
description, state set, action names, extents (desktop coordinates), text
(character count and the text, for nodes with the Text interface) and the
current value (for nodes with the Value interface). Repeats RUNS times
(default 10) and prints one JSON line: {"nodes": n, "ms": [...], "median": m}.

By default libatspi's per-object cache is cleared before each run, so every
run reads from the app as a fresh snapshot would; --warm keeps it.
--dump FILE writes the last run's tree as JSON (to check what was read).

    /usr/bin/python3 bench/pyatspi_walk.py --page TITLE ROWS [TIMEOUT_S]

Waits (default 90 s) until Chromium's web document named TITLE holds its list
of ROWS items (test/pages/huge.html: Chromium builds a big page's tree seconds
after its window shows), then counts the page's elements: every element
outside the list's items, plus, per item, the size of the first item of its
kind (odd rows hold a button, even rows a link). Prints one JSON line:
{"rows": r, "elements": e, "odd": o, "even": v, "waited_ms": w}; exits 1 with
what it saw last if the page never builds.
"""

import json
import statistics
import sys
import time

try:
    import pyatspi
except ImportError:
    sys.stderr.write(
        "pyatspi_walk: cannot import pyatspi; install python3-pyatspi and run with /usr/bin/python3\n"
    )
    sys.exit(2)

WINDOW_ROLES = {pyatspi.ROLE_FRAME, pyatspi.ROLE_WINDOW, pyatspi.ROLE_DIALOG}


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def parse_args(argv):
    app_name = None
    runs = 10
    warm = False
    dump = None
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--warm":
            warm = True
        elif arg == "--dump":
            if not rest:
                usage()
            dump = rest.pop(0)
        elif arg.startswith("-"):
            usage()
        elif app_name is None:
            app_name = arg
        else:
            try:
                runs = int(arg)
            except ValueError:
                usage()
    if app_name is None or runs < 1:
        usage()
    return app_name, runs, warm, dump


def find_app(name, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while True:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            try:
                if app is not None and app.name == name and app.childCount > 0:
                    return app
            except Exception:
                continue
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.1)


def first_window(app):
    children = [app.getChildAtIndex(i) for i in range(app.childCount)]
    children = [c for c in children if c is not None]
    for child in children:
        try:
            if child.getRole() in WINDOW_ROLES:
                return child
        except Exception:
            continue
    return children[0] if children else None


def read_node(acc):
    """Reads every field of one node; an unreadable field becomes None."""
    node = {}
    try:
        node["role"] = acc.getRoleName()
    except Exception:
        node["role"] = None
    try:
        node["name"] = acc.name
    except Exception:
        node["name"] = None
    try:
        node["description"] = acc.description
    except Exception:
        node["description"] = None
    try:
        node["states"] = [s.value_nick for s in acc.getState().getStates()]
    except Exception:
        node["states"] = None
    try:
        action = acc.queryAction()
        node["actions"] = [action.getName(i) for i in range(action.nActions)]
    except NotImplementedError:
        node["actions"] = []
    except Exception:
        node["actions"] = None
    try:
        ext = acc.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        node["extents"] = [ext.x, ext.y, ext.width, ext.height]
    except NotImplementedError:
        node["extents"] = None
    except Exception:
        node["extents"] = None
    try:
        text = acc.queryText()
        count = text.characterCount
        node["text"] = text.getText(0, count) if count > 0 else ""
    except NotImplementedError:
        pass
    except Exception:
        node["text"] = None
    try:
        node["value"] = acc.queryValue().currentValue
    except NotImplementedError:
        pass
    except Exception:
        node["value"] = None
    return node


def walk(acc, depth=0, seen=None):
    """Depth-first walk; returns (node dict with children, node count)."""
    if seen is None:
        seen = set()
    node = read_node(acc)
    count = 1
    children = []
    try:
        n = acc.childCount
    except Exception:
        n = 0
    for i in range(n):
        try:
            child = acc.getChildAtIndex(i)
        except Exception:
            continue
        if child is None:
            continue
        key = hash(child)
        if key in seen or depth > 200:
            continue
        seen.add(key)
        sub, sub_count = walk(child, depth + 1, seen)
        children.append(sub)
        count += sub_count
    if children:
        node["children"] = children
    return node, count


def subtree_size(acc):
    n = 1
    for i in range(acc.childCount):
        child = acc.getChildAtIndex(i)
        if child is not None:
            n += subtree_size(child)
    return n


def find_document(title, app_name="Chromium", max_depth=12):
    """Breadth-first through the app's windows to its web document named `title`."""
    desktop = pyatspi.Registry.getDesktop(0)
    for a in range(desktop.childCount):
        app = desktop.getChildAtIndex(a)
        if app is None or app.name != app_name:
            continue
        queue = [(app, 0)]
        while queue:
            acc, depth = queue.pop(0)
            if acc.getRoleName() == "document web" and acc.name == title:
                return acc
            if depth < max_depth:
                for i in range(acc.childCount):
                    child = acc.getChildAtIndex(i)
                    if child is not None:
                        queue.append((child, depth + 1))
    return None


def page_main(argv):
    if len(argv) < 2:
        usage()
    title, rows = argv[0], int(argv[1])
    timeout_s = float(argv[2]) if len(argv) > 2 else 90.0
    start = time.monotonic()
    last = "no document"
    while True:
        try:
            doc = find_document(title)
            children = [doc.getChildAtIndex(i) for i in range(doc.childCount)] if doc else []
            lists = [c for c in children if c is not None and c.getRoleName() == "list"]
            if lists and lists[0].childCount == rows:
                count = 1
                for child in children:
                    if child is not None:
                        count += 1 if child.getRoleName() == "list" else subtree_size(child)
                odd = subtree_size(lists[0].getChildAtIndex(0))
                even = subtree_size(lists[0].getChildAtIndex(1)) if rows > 1 else 0
                count += (rows - rows // 2) * odd + (rows // 2) * even
                waited = round((time.monotonic() - start) * 1000)
                print(json.dumps({"rows": rows, "elements": count, "odd": odd, "even": even, "waited_ms": waited}))
                return
            if lists:
                last = "its list has %d of %d items" % (lists[0].childCount, rows)
            else:
                last = "a document without its list" if doc else "no document named %r" % title
        except Exception as e:  # the tree changes under us while the page builds
            last = repr(e)
        if time.monotonic() - start > timeout_s:
            sys.stderr.write("pyatspi_walk: the page never built in %.0f s: %s\n" % (timeout_s, last))
            sys.exit(1)
        time.sleep(0.5)


def main():
    if sys.argv[1:2] == ["--page"]:
        page_main(sys.argv[2:])
        return
    app_name, runs, warm, dump = parse_args(sys.argv[1:])
    app = find_app(app_name)
    if app is None:
        sys.stderr.write("pyatspi_walk: no app named %r with a window on the desktop\n" % app_name)
        sys.exit(1)
    window = first_window(app)
    if window is None:
        sys.stderr.write("pyatspi_walk: %r has no window\n" % app_name)
        sys.exit(1)

    times = []
    nodes = 0
    tree = None
    for _ in range(runs):
        if not warm:
            window.clearCache()
        start = time.perf_counter()
        tree, nodes = walk(window)
        times.append(round((time.perf_counter() - start) * 1000, 2))

    if dump:
        with open(dump, "w", encoding="utf-8") as f:
            json.dump(tree, f, indent=1, ensure_ascii=False)
    print(json.dumps({"app": app_name, "nodes": nodes, "ms": times, "median": round(statistics.median(times), 2)}))


if __name__ == "__main__":
    main()
