/**
 * A child process of test/trace/secret-mask.test.ts: one session on the fake
 * backend, as one CLI command would run. `type` types argv[4] as a secret
 * into the Token field; `look` snapshots the app, whose Token field shows
 * argv[4] (what the app kept of the secret).
 */
import { loadNative } from "../../lib/native.js";
import { createSession } from "../../lib/session/session.js";
import { secretDesktop, tokenIndex } from "./secret-desktop.js";

async function main(): Promise<void> {
  const [dir, role, value] = process.argv.slice(2);
  const native = loadNative();
  const b = new native.NativeBackend("fake", secretDesktop(role === "look" ? value! : ""));
  const s = createSession({ backend: b, deadlineMs: 2000, trace: dir! });
  const snap = await s.snapshot({ app: "Vault" });
  if (role === "type") await s.typeText(value!, { target: tokenIndex(snap.text), secret: true });
  await s.close();
  await b.close();
}

void main();
