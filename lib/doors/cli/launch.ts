/**
 * `axsnap launch APP [-- ARGS]` and `axsnap apps --launchable`: starting
 * apps from the command line, printed the way the other commands print.
 */

import { AxsnapError } from "../../model/errors.js";
import { type LaunchedApp, launchApp, listLaunchable } from "../../session/launch/launch.js";
import { launchableText } from "../lists.js";
import type { Step } from "./grammar.js";
import { type NextContext, nextCommand } from "./next.js";

export function launchedText(app: LaunchedApp, next: string): string {
  const w = app.window;
  const from = app.entry ? ` from ${app.entry.id}` : "";
  return [
    `started ${app.name}${from}: pid ${app.pid}, first window after ${app.ms} ms`,
    `window ${w.index} ${w.kind} ${JSON.stringify(w.title)} id ${w.id}`,
    `next: ${next}`,
    "",
  ].join("\n");
}

/** The library's phrasings in a launch refusal → this CLI's commands. */
function cliHint(e: unknown): unknown {
  if (!(e instanceof AxsnapError)) return e;
  const hint = e.hint
    .replace(/launchApp\("\/path\/to\/program", \{ args \}\)/g, "axsnap launch /path/to/program -- ARGS")
    .replace(/listLaunchable\(\)/g, "axsnap apps --launchable")
    .replace(/listApps\(\)/g, "axsnap apps");
  if (hint === e.hint) return e;
  return new AxsnapError(e.code, e.message, {
    hint,
    delivery: e.delivery,
    cause: e,
    ...(e.pid === undefined ? {} : { pid: e.pid }),
  });
}

/** `context`: what the printed next command must carry (lib/doors/cli/next.ts). */
export async function launchCommand(
  step: Step,
  context: NextContext = {},
): Promise<{ data: unknown; text: string }> {
  const app = await launchApp(step.program!, {
    args: step.launchArgs ?? [],
    ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
  }).catch((e) => {
    throw cliHint(e);
  });
  const next = nextCommand(["snapshot", "--app", String(app.pid)], context);
  return {
    data: {
      pid: app.pid,
      name: app.name,
      window: app.window,
      via: app.via,
      ...(app.entry ? { entry: app.entry } : {}),
      ms: app.ms,
      next,
    },
    text: launchedText(app, next),
  };
}

export async function launchableCommand(step: Step): Promise<{ data: unknown; text: string }> {
  const entries = await listLaunchable(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs });
  return { data: { launchable: entries }, text: launchableText(entries) };
}
