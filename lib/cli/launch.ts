/**
 * `axsnap launch APP [-- ARGS]` and `axsnap apps --launchable`: starting
 * apps from the command line, printed the way the other commands print.
 */
import { type LaunchableApp, type LaunchedApp, launchApp, listLaunchable } from "../launch.js";
import type { Step } from "./args.js";

export function launchedText(app: LaunchedApp): string {
  const w = app.window;
  const from = app.entry ? ` from ${app.entry.id}` : "";
  return [
    `started ${app.name}${from}: pid ${app.pid}, first window after ${app.ms} ms`,
    `window ${w.index} ${w.kind} ${JSON.stringify(w.title)} id ${w.id}`,
    `next: axsnap snapshot --app ${app.pid}`,
    "",
  ].join("\n");
}

export function launchableText(entries: LaunchableApp[]): string {
  return entries.map((e) => `${e.id}\t${e.name}${e.hidden ? "\t(hidden from menus)" : ""}\n`).join("");
}

export async function launchCommand(step: Step): Promise<{ data: unknown; text: string }> {
  const app = await launchApp(step.program!, {
    args: step.launchArgs ?? [],
    ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
  });
  return {
    data: {
      pid: app.pid,
      name: app.name,
      window: app.window,
      via: app.via,
      ...(app.entry ? { entry: app.entry } : {}),
      ms: app.ms,
    },
    text: launchedText(app),
  };
}

export async function launchableCommand(step: Step): Promise<{ data: unknown; text: string }> {
  const entries = await listLaunchable(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs });
  return { data: { launchable: entries }, text: launchableText(entries) };
}
