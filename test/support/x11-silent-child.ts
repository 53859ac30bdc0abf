/**
 * Child process for test/linux/x11.test.ts: calls the native backend while
 * DISPLAY names an X server that accepts and never answers (started here, so
 * this process's own event loop serves it), then with DISPLAY on the real
 * Xvfb again, printing one JSON line per call, then process.exit(0). The
 * parent checks the timings and that this process exits at all.
 *
 * Environment: AXSNAP_TEST_APP_PID (an app on the real desktop),
 * AXSNAP_TEST_REAL_DISPLAY; the desktop's bus environment is inherited.
 */
import { loadNative, type NativeWindow } from "../../lib/native.js";
import { silentXServer } from "./x11.js";

const pid = Number(process.env.AXSNAP_TEST_APP_PID);
const realDisplay = process.env.AXSNAP_TEST_REAL_DISPLAY ?? "";

async function timed(name: string, call: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  let outcome: Record<string, unknown>;
  try {
    const value = (await call()) as { screenshot?: unknown } | undefined;
    outcome = { ok: true, screenshot: Boolean(value && typeof value === "object" && value.screenshot) };
  } catch (e) {
    const err = e as { nativeCode?: string; message?: string };
    outcome = { ok: false, code: err.nativeCode, message: err.message };
  }
  console.log(JSON.stringify({ name, ms: Math.round(performance.now() - t0), ...outcome }));
}

const fake = await silentXServer();
process.env.DISPLAY = fake.display;
const native = loadNative();
const backend = new native.NativeBackend("linux");
await backend.connect();
const request = { app: pid, maxNodes: 2000, maxDepth: 64, screenshot: true };
let window: NativeWindow | undefined;
await timed("snapshot-silent", async () => {
  const s = await backend.snapshot({ ...request, deadlineMs: 1500 });
  window = s.window;
  await backend.release(s.handles);
  return s;
});
if (window) {
  const w = window;
  const cx = w.frame.x + w.frame.w / 2;
  const cy = w.frame.y + w.frame.h / 2;
  await timed("click-silent", () => backend.pointer(w, { kind: "click", x: cx, y: cy }, 1000));
  await timed("keys-silent", () => backend.keys(w, "Escape", 1000));
  await timed("type-silent", () => backend.typeText(w, "x", 1000));
}
process.env.DISPLAY = realDisplay;
await timed("snapshot-real", async () => {
  const s = await backend.snapshot({ ...request, deadlineMs: 5000 });
  await backend.release(s.handles);
  return s;
});
// Another silent call in flight when the process exits: exit must not wait for it.
process.env.DISPLAY = fake.display;
void backend.snapshot({ ...request, deadlineMs: 60_000 }).catch(() => {});
setTimeout(() => {
  console.log(JSON.stringify({ name: "exit" }));
  process.exit(0);
}, 300);
