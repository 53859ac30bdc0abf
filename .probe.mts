import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gtkWidgetFactory, startDesktop } from "./scripts/desktop.mjs";
import { runCliJson, indexIn } from "./test/support/cli.ts";
const d = await startDesktop();
Object.assign(process.env, d.env);
const app = await gtkWidgetFactory(d);
const state = mkdtempSync(join(tmpdir(), "probe-"));
const env = { XDG_STATE_HOME: state };
const shot = await runCliJson(["snapshot", "--app", "gtk3-widget-factory", "--screenshot", join(state, "a.png")], env);
console.log("shot", JSON.stringify(shot.env.data.window));
for (const [from, to] of [["Page 1", "Page 2"], ["Page 2", "Page 1"], ["Page 1", "Page 2"]]) {
  const snap = await runCliJson(["snapshot", "--app", "gtk3-widget-factory"], env);
  console.log("snap", JSON.stringify(snap.env.data.window));
  const index = indexIn(snap.env.data.text, new RegExp(`^\\d+ radio button ${to}, Value: off$`));
  const click = await runCliJson(["click", `@${snap.env.data.snapshotId}:e${index}`], env);
  console.log("click", click.env.ok, click.env.ok ? JSON.stringify(click.env.data.snapshot?.window) : click.env.error.message);
}
await app.stop();
await d.stop();
