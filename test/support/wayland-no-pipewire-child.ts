/**
 * Child process for test/linux/wayland-capture-input.test.ts: runs with
 * AXSNAP_PIPEWIRE_LIB=/nonexistent (libpipewire "not installed" for this
 * process) on the parent's Wayland desktop, whose environment it inherits.
 * Prints one JSON line: whether the addon loaded, what a snapshot with a
 * screenshot gave, and whether input (which needs no PipeWire) still worked.
 */
import { createSession } from "../../lib/index.js";

const app = process.env.AXSNAP_TEST_APP ?? "gtk3-widget-factory";
const out: Record<string, unknown> = {};
const session = createSession();
try {
  const snap = await session.snapshot({ app });
  out.snapshot = true;
  out.screenshot = snap.screenshot !== undefined;
  out.text = snap.text;
  // Keys go where focus is: focus the entry first (whichever way the library clicks it), then press through Mutter.
  const entry = snap.records.find((r) => r.role === "text" && r.settable);
  if (entry) out.click = (await session.click(entry.index)).channel;
  const result = await session.pressKey("End");
  out.pressKey = result.delivery;
} catch (e) {
  const err = e as { code?: string; message?: string };
  out.error = { code: err.code, message: err.message };
} finally {
  await session.close();
}
console.log(JSON.stringify(out));
process.exit(0);
