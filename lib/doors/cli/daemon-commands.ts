/**
 * `axsnap daemon status|start|stop|run`: the warm process of this
 * environment (lib/doors/cli/daemon.ts), seen and steered from the command line.
 */
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { Context, Serve } from "./context.js";
import { daemonDisabled } from "./daemon-address.js";
import { addressOf, askDaemon, type Frame, spawnDaemon } from "./daemon-client.js";
import type { DaemonAction } from "./grammar.js";

export interface DaemonStatus {
  running: boolean;
  /** The socket this environment's warm process listens at. */
  socket: string;
  pid?: number;
  served?: number;
  /** Serving a command now: another command meanwhile runs in its own process. */
  busy?: boolean;
  upMs?: number;
  idleMs?: number;
}

const OFF_HINT = "unset AXSNAP_DAEMON (it is off) to let commands start and use a warm process";

function statusOf(socket: string, f: Frame | undefined): DaemonStatus {
  if (f?.t !== "status") return { running: false, socket };
  return {
    running: true,
    socket,
    pid: f.pid,
    served: f.served,
    busy: f.busy,
    upMs: Date.now() - f.startedAt,
    idleMs: f.idleMs,
  };
}

function statusText(s: DaemonStatus): string {
  if (!s.running) return "no warm process for this environment (the next command starts one)\n";
  return `warm process ${s.pid}: served ${s.served} commands, up ${Math.round(s.upMs! / 1000)} s, exits after ${Math.round(s.idleMs! / 1000)} s idle\n`;
}

async function until<T>(ms: number, probe: () => Promise<T | undefined>): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined || Date.now() >= end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function daemonCommand(
  action: DaemonAction,
  context: Context,
  serve: Serve,
  warm?: string,
): Promise<{ data: DaemonStatus; text: string }> {
  const socket = addressOf(process.env, context.script);
  if (socket === undefined)
    throw invalidArgument(
      "no place for the warm process's socket: the runtime directory is not private to this user (it must be a directory of ours, mode 0700), or its path is too long for a socket",
      "fix the permissions of $XDG_RUNTIME_DIR/axsnap (or the axsnap-<uid> directory in the temporary directory), or set AXSNAP_DAEMON=off",
    );
  if (action === "run") {
    if (daemonDisabled(process.env)) throw invalidArgument("AXSNAP_DAEMON is off", OFF_HINT);
    const { runDaemon } = await import("./daemon.js");
    await runDaemon({ address: socket, context, serve, ...(warm === undefined ? {} : { warm }) });
    return { data: { running: false, socket }, text: "" };
  }
  const now = statusOf(socket, await askDaemon(socket, "status"));
  if (action === "status") return { data: now, text: statusText(now) };
  if (action === "stop") {
    if (!now.running) return { data: now, text: statusText(now) };
    await askDaemon(socket, "stop");
    // It exits once a command it is serving has ended; wait (bounded) until it no longer answers.
    await until(10_000, async () => ((await askDaemon(socket, "status")) === undefined ? true : undefined));
    return { data: { running: false, socket }, text: `stopped warm process ${now.pid}\n` };
  }
  if (daemonDisabled(process.env)) throw invalidArgument("AXSNAP_DAEMON is off", OFF_HINT);
  if (now.running) return { data: now, text: `already running: ${statusText(now)}` };
  await spawnDaemon(context.script);
  const up = await until(10_000, async () => {
    const f = await askDaemon(socket, "status");
    return f?.t === "status" ? f : undefined;
  });
  if (up === undefined)
    throw new AxsnapError("TIMEOUT", "the warm process did not start within 10 s", {
      hint: "run `axsnap daemon run` in a terminal to see why it stops; commands work without it",
    });
  const s = statusOf(socket, up);
  return { data: s, text: `started ${statusText(s)}` };
}
