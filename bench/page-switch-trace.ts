/**
 * bench/page-switch-trace: what gtk3-widget-factory sends on the accessibility bus around an
 * action (by default its stack switcher changing page, "Page 2" / "Page 1"): every counted
 * event and every probe move, when it came and from which object, and when waitQuiet said
 * quiet, with the element count then and 1.5 s later. The addon's trace goes to stderr:
 *
 *   AXSNAP_EVENT_TRACE=1 npx tsx bench/page-switch-trace.ts 2>trace.txt
 *
 *   STEPS="toggle button:Menu,check box:Slide Pages,radio button:Page 2,radio button:Page 1"
 *                      role:name of the elements to act on, in order (the default: the two pages)
 *   APP=galculator     galculator instead
 *   NAMES=/org/a11y/atspi/accessible/12,...   print the role and name of these objects at the end
 *
 * stdout: "CLICK|ACTED|QUIET|DONE <monotonic ms>" markers (the trace's clock). bounds-changed is
 * not registered by the addon: the measurement for issue 11 registered it in a local build.
 */
import { execFileSync } from "node:child_process";
import type { RawNode } from "../lib/model/model.js";
import { loadNative } from "../lib/native.js";
import { gtkWidgetFactory, startApp, startDesktop } from "../scripts/desktop.mjs";

const mono = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function nodes(root: RawNode): RawNode[] {
  const out: RawNode[] = [];
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    stack.push(...(n.children ?? []));
  }
  return out;
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
const b = new (loadNative().NativeBackend)("linux");
await b.connect(5000);
const gtk =
  process.env.APP === "galculator"
    ? await startApp(desktop, "galculator", [], { name: "galculator" })
    : await gtkWidgetFactory(desktop);
try {
  await b.watch(gtk.pid);
  await sleep(1000);
  console.log(`IDLE ${mono().toFixed(1)} 1 s of idle follows`);
  await sleep(1000);
  for (const step of (process.env.STEPS ?? "radio button:Page 2,radio button:Page 1").split(",")) {
    const [role, label] = step.split(":") as [string, string];
    const s = await b.snapshot({
      app: gtk.pid,
      screenshot: false,
      deadlineMs: 5000,
      maxNodes: 4000,
      maxDepth: 64,
    });
    const all = nodes(s.raw.root);
    const node = all.find((n) => n.title === label && (n.actions?.length ?? 0) > 0 && n.role === role);
    if (!node) throw new Error(`no ${label}`);
    await sleep(500);
    const before = await b.waitEvents(gtk.pid, 0, 0);
    console.log(`CLICK ${mono().toFixed(1)} ${label} (${all.length} nodes before)`);
    await b.doAction(node.handle!, node.actions![0]!, 2000);
    console.log(`ACTED ${mono().toFixed(1)} ${label}`);
    const t0 = mono();
    const q = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
    console.log(
      `QUIET ${mono().toFixed(1)} ${q.settled} ${q.ms.toFixed(0)} ms events ${q.events} (${(mono() - t0).toFixed(0)})`,
    );
    const s1 = await b.snapshot({
      app: gtk.pid,
      screenshot: false,
      deadlineMs: 5000,
      maxNodes: 4000,
      maxDepth: 64,
    });
    const n1 = nodes(s1.raw.root).length;
    await sleep(Math.max(0, 1500 - (mono() - t0)));
    const s2 = await b.snapshot({
      app: gtk.pid,
      screenshot: false,
      deadlineMs: 5000,
      maxNodes: 4000,
      maxDepth: 64,
    });
    console.log(
      `DONE ${mono().toFixed(1)} nodes at quiet ${n1}, 1.5 s later ${nodes(s2.raw.root).length} (stamp ${before.stamp})`,
    );
    await b.release(s.handles);
    await b.release(s1.handles);
    await b.release(s2.handles);
  }
  if (process.env.NAMES) {
    for (const p of process.env.NAMES.split(",")) {
      const get = (prop: string) => {
        try {
          return execFileSync(
            "gdbus",
            [
              "call",
              "--address",
              desktop.a11yBusAddress,
              "--dest",
              gtk.busName,
              "--object-path",
              p,
              "--method",
              "org.freedesktop.DBus.Properties.Get",
              "org.a11y.atspi.Accessible",
              prop,
            ],
            { encoding: "utf8" },
          ).trim();
        } catch {
          return "?";
        }
      };
      const role = (() => {
        try {
          return execFileSync(
            "gdbus",
            [
              "call",
              "--address",
              desktop.a11yBusAddress,
              "--dest",
              gtk.busName,
              "--object-path",
              p,
              "--method",
              "org.a11y.atspi.Accessible.GetRoleName",
            ],
            { encoding: "utf8" },
          ).trim();
        } catch {
          return "?";
        }
      })();
      console.log(`NAME ${p} ${role} ${get("Name")}`);
    }
  }
} finally {
  await b.close();
  await gtk.stop();
  await desktop.stop();
}
