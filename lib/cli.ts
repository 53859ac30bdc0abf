#!/usr/bin/env node
/**
 * The axsnap command line:
 *   axsnap apps
 *   axsnap snapshot --app NAME|PID [--style tree|compact] [--screenshot out.png]
 *                   [--max-nodes N] [--max-depth N] [--deadline MS] [--text-limit N|max]
 * Prints the snapshot text on stdout; errors print their code and hint on
 * stderr and exit 1 (2 for a usage error).
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { listApps, snapshot } from "./desktop.js";
import { AxsnapError } from "./errors.js";

const USAGE = `usage:
  axsnap apps
  axsnap snapshot --app NAME|PID [--style tree|compact] [--screenshot out.png]
                  [--max-nodes N] [--max-depth N] [--deadline MS] [--text-limit N|max]`;

function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new AxsnapError("INVALID_ARGUMENT", `--${name} must be a positive integer`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "apps") {
    for (const app of await listApps()) console.log(`${app.name}\tpid ${app.pid}`);
    return 0;
  }
  if (command !== "snapshot") {
    console.error(USAGE);
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      app: { type: "string" },
      style: { type: "string" },
      screenshot: { type: "string" },
      "max-nodes": { type: "string" },
      "max-depth": { type: "string" },
      deadline: { type: "string" },
      "text-limit": { type: "string" },
    },
  });
  if (values.app === undefined) {
    console.error(USAGE);
    return 2;
  }
  const app = /^\d+$/.test(values.app) ? Number(values.app) : values.app;
  const textLimit = values["text-limit"] === "max" ? "max" : int("text-limit", values["text-limit"]);
  const maxNodes = int("max-nodes", values["max-nodes"]);
  const maxDepth = int("max-depth", values["max-depth"]);
  const deadlineMs = int("deadline", values.deadline);
  const snap = await snapshot({
    app,
    screenshot: values.screenshot !== undefined,
    ...(values.style !== undefined ? { style: values.style as "tree" } : {}),
    ...(textLimit !== undefined ? { textLimit } : {}),
    ...(maxNodes !== undefined ? { maxNodes } : {}),
    ...(maxDepth !== undefined ? { maxDepth } : {}),
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
  });
  console.log(snap.text);
  if (values.screenshot !== undefined) {
    if (snap.screenshot) {
      writeFileSync(values.screenshot, snap.screenshot.data);
      const s = snap.screenshot;
      console.error(
        `screenshot: ${values.screenshot} (${s.pixelWidth}×${s.pixelHeight} px, ${s.scale} px per point, window at ${s.windowOrigin.x},${s.windowOrigin.y})`,
      );
    } else {
      console.error("screenshot: none was captured (see the notes at the end of the text)");
    }
  }
  await snap.release();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof AxsnapError) {
      console.error(`axsnap: ${e.code}: ${e.message}\nhint: ${e.hint}`);
      process.exit(e.code === "INVALID_ARGUMENT" ? 2 : 1);
    }
    console.error(e);
    process.exit(1);
  },
);
