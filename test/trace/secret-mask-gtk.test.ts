/**
 * Issue 34 (design 1.5) on a real app: a secret typed into
 * gtk3-widget-factory's text entry by one process, then a snapshot by
 * another process, as two CLI commands run. The second process never saw the
 * secret; the field's mask in the trace directory tells it what to hide. No
 * file of the trace holds the secret (PNGs included), though the app shows it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTrace } from "../../lib/session/trace/read.js";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { emptyEntry } from "../support/trace-secret-gtk.js";

const TIMEOUT = 120_000;
const TSX = import.meta.resolve("tsx");
const CHILD = new URL("../support/trace-secret-gtk.ts", import.meta.url).pathname;

let desktop: Desktop;
let work: string;

beforeAll(async () => {
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
  work = mkdtempSync(join(tmpdir(), "axsnap-secret-gtk-"));
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

function child(
  dir: string,
  role: "type" | "look",
  value = "",
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", TSX, CHILD, dir, role, value], {
      env: { ...process.env, ...desktop.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on("data", (d: Buffer) => out.push(d));
    p.stderr.on("data", (d: Buffer) => err.push(d));
    p.on("error", reject);
    p.on("close", (code) =>
      resolve({
        code: code ?? -1,
        out: Buffer.concat(out).toString("utf8"),
        err: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(Buffer.from(needle))) out.push(p);
    }
  };
  walk(dir);
  return out;
}

describe("a secret typed into gtk3-widget-factory by one process", () => {
  it(
    "is kept out of the trace a later process writes, though the app still shows it",
    async () => {
      const trace = join(work, "run.axtrace");
      const typed = await child(trace, "type", "hunter2");
      expect(typed.err).toBe("");
      expect(typed.code).toBe(0);
      const entry = /^\t*(\d+) text \(settable, string\) Value: hunter2\b/m.exec(typed.out);
      expect(entry, typed.out).not.toBeNull();

      const looked = await child(trace, "look");
      expect(looked.code, looked.err).toBe(0);
      // The app shows the value to the agent: only the trace must not keep it.
      expect(looked.out).toContain(`${entry![1]} text (settable, string) Value: hunter2`);

      expect(filesHolding(trace, "hunter2")).toEqual([]);
      const t = readTrace(trace);
      const last = t.steps.at(-1)!;
      expect(last.pid).not.toBe(t.steps[0]!.pid);
      const line = t.snapshots.get(last.after!)!;
      expect(line.text).toContain(`${entry![1]} text (settable, string) Value: «secret»`);
      expect(line.shot).toEqual({ withheld: "secret" });
      // Fields the secret did not go into keep their values, and snapshots without it their shots.
      expect(line.text).toContain("Value: Andrea");
      expect(emptyEntry(t.snapshots.get(t.steps[0]!.after!)!.text)).toBe(Number(entry![1]));
      expect(t.snapshots.get(t.steps[0]!.after!)!.shot).toHaveProperty("file");
    },
    TIMEOUT,
  );
});
