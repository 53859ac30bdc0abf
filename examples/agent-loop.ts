/**
 * An agent loop in a dozen lines: observe, pick an element by what it says,
 * act on it by ref, read the result. Run it against any app with a radio
 * button named "Page 2" (gtk3-widget-factory has one):
 *
 *   npx tsx examples/agent-loop.ts gtk3-widget-factory "Page 2"
 *
 * The test suite runs this file on a headless desktop (test/doors/examples.test.ts).
 */
import { AxsnapError, createSession } from "axsnap";

const [app = "gtk3-widget-factory", name = "Page 2"] = process.argv.slice(2);
const session = createSession();
try {
  // Observe: one window as numbered lines (the text an LLM would read).
  const snap = await session.snapshot({ app, style: "compact", screenshot: false });

  // Pick: an agent reads the text; here, the first element whose name is `name`.
  const record = snap.records.find((r) => r.title === name);
  if (!record) throw new Error(`no element named ${name} in:\n${snap.text}`);

  // Act by ref: "@<snapshot id>:e<index>" names this observation, so it can never
  // land on what another snapshot printed at that index.
  const result = await session.click(`@${snap.id}:e${record.index}`);

  // Read the result: what was delivered, how, and the app as it is now.
  console.log(`${result.action} ${name}: ${result.delivery} via ${result.channel}`);
  for (const note of result.notes) console.log(`  note: ${note}`);
  const after = result.snapshot?.records.find((r) => r.title === name);
  const line = after && result.snapshot?.text.split("\n").find((l) => l.trim().startsWith(`${after.index}:`));
  console.log(`now: ${line?.trim() ?? "(not printed)"}`);
} catch (e) {
  // Refusals are typed: a stable code, and a hint that says what to do next.
  if (!(e instanceof AxsnapError)) throw e;
  console.log(`refused: ${e.code} (${e.message}); next: ${e.hint}`);
  process.exitCode = 1;
} finally {
  await session.close();
}
