/**
 * LibreOffice under the test desktop: one private profile per test file (the
 * first start builds it, about 20 s here), the GTK3 VCL plugin (the only one
 * that exposes AT-SPI), no recovery or start centre. The app the tests act on
 * is soffice.bin, a child of the soffice script's oosplash; `pid` is its pid.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";

export interface Office {
  app: App;
  /** soffice.bin's pid: the process that owns the windows and answers AT-SPI. */
  pid: number;
}

/** A fresh directory for a test file's profile and documents. */
export function officeDir(): string {
  return mkdtempSync(join(tmpdir(), "axsnap-office-"));
}

/** Starts soffice (`--calc`, `--writer`, `--impress`) on `file` or a new document; resolves when `windowName` shows. */
export async function startOffice(
  desktop: Desktop,
  dir: string,
  kind: "calc" | "writer" | "impress",
  windowName: string,
  file?: string,
): Promise<Office> {
  desktop.env.SAL_USE_VCLPLUGIN = "gtk3";
  const args = [
    `-env:UserInstallation=file://${join(dir, "profile")}`,
    "--norestore",
    "--nologo",
    ...(file ? ["--nodefault"] : []),
    `--${kind}`,
    ...(file ? [file] : []),
  ];
  const app = await startApp(desktop, "/usr/bin/soffice", args, { windowName, timeoutMs: 180_000 });
  const pid = officeBinPid(app.pid);
  if (pid === undefined) {
    await app.stop();
    throw new Error(`soffice (group ${app.pid}) registered, but no soffice.bin runs in its group`);
  }
  return { app, pid };
}

function officeBinPid(group: number): number | undefined {
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, "utf8");
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    if (comm === "soffice.bin" && pgrp === group) return Number(d);
  }
  return undefined;
}

/** CPU ticks (user + system, 1/100 s) and resident memory of a process, from /proc. */
export function processUse(pid: number): { ticks: number; rssMB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return { ticks: Number(f[11]) + Number(f[12]), rssMB: Number(rss?.[1] ?? 0) / 1024 };
}

/** A small .xlsx written by test/apps/make-xlsx.py: `values` down column A, "Total" in B1. */
export function makeXlsx(path: string, values: number[]): void {
  execFileSync("/usr/bin/python3", ["test/apps/make-xlsx.py", path, ...values.map(String)]);
}
