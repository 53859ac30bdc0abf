/**
 * A child process of test/trace/secret-mask-gtk.test.ts: one library session
 * on the real desktop, as one CLI command runs in a process of its own.
 * `type` types argv[4] as a secret into gtk3-widget-factory's empty text
 * entry; `look` snapshots the app. Prints the snapshot text it got.
 */
import { createSession } from "../../lib/session/session.js";

const APP = "gtk3-widget-factory";

/** The line number of the empty entry whose placeholder says "Click icon to change mode". */
export function emptyEntry(text: string): number {
  const m = /^\t*(\d+) text \(settable, string\) Placeholder: Click icon/m.exec(text);
  if (!m) throw new Error(`no empty text entry in:\n${text}`);
  return Number(m[1]);
}

async function main(): Promise<void> {
  const [dir, role, value] = process.argv.slice(2);
  const s = createSession({ trace: dir! });
  try {
    const snap = await s.snapshot({ app: APP });
    if (role === "type") {
      const r = await s.typeText(value!, { target: emptyEntry(snap.text), secret: true });
      process.stdout.write(r.snapshot?.text ?? "");
    } else process.stdout.write(snap.text);
  } finally {
    await s.close();
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) void main();
