/**
 * `axsnap trace view FILE`: one self-contained HTML page. It makes no
 * request (its Content-Security-Policy allows only inline style, inline
 * script and data: images, plus file: images with `images: "files"`), embeds
 * the trace once as a JSON data block and builds the page from it with
 * textContent only (view-page.ts): names in a trace are hostile input.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { clockOf, flagOf, orderedSteps, stepName } from "./show.js";
import type { ReadTrace, TraceSnapshotLine, TraceStepLine } from "./types.js";
import { PAGE_SCRIPT, PAGE_STYLE } from "./view-page.js";

export interface ViewOptions {
  /** "inline" (default): screenshots as data URIs, one file to share; "files": links to the trace's shots/. */
  images?: "inline" | "files";
}

/** What the page's script reads: the steps in the order they started, named as `trace show` names them. */
export interface ViewData {
  runId: string;
  createdAt: string;
  platform: string;
  truncated: boolean;
  steps: { step: TraceStepLine; name: string; clock: string; flag?: "refused" | "uncertain" }[];
  snapshots: Record<string, TraceSnapshotLine>;
  /** A shot's `file` → the image's src (a data: or file: URL). */
  images: Record<string, string>;
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A shot file inside the trace directory, or undefined: a trace names its files
 * itself, and one that says `../../somewhere` must not get that file embedded.
 */
function shotPath(trace: ReadTrace, file: string): string | undefined {
  if (typeof file !== "string" || isAbsolute(file)) return undefined;
  const root = resolve(trace.path);
  const path = resolve(root, file);
  const rel = relative(root, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return existsSync(path) ? path : undefined;
}

function imageSrc(trace: ReadTrace, file: string, images: "inline" | "files"): string | undefined {
  const path = shotPath(trace, file);
  if (!path) return undefined;
  // Only PNGs: a shot entry naming trace.json or any other file gets no image.
  const png = readFileSync(path);
  if (png.length < 8 || !png.subarray(0, 8).equals(PNG_MAGIC)) return undefined;
  if (images === "files") return pathToFileURL(path).href;
  return `data:image/png;base64,${png.toString("base64")}`;
}

export function viewData(trace: ReadTrace, images: "inline" | "files" = "inline"): ViewData {
  const steps = orderedSteps(trace);
  const used = new Set<string>();
  for (const s of steps) {
    if (s.before) used.add(s.before);
    if (s.after) used.add(s.after);
    for (const t of s.targets ?? []) used.add(t.snapshot);
  }
  const snapshots: Record<string, TraceSnapshotLine> = {};
  const srcs: Record<string, string> = {};
  for (const id of used) {
    const snap = trace.snapshots.get(id);
    if (!snap) continue;
    snapshots[id] = snap;
    const file = snap.shot && "file" in snap.shot ? snap.shot.file : undefined;
    if (file !== undefined && !(file in srcs)) {
      const src = imageSrc(trace, file, images);
      if (src) srcs[file] = src;
    }
  }
  return {
    runId: trace.header.runId,
    createdAt: trace.header.createdAt,
    platform: trace.header.platform,
    truncated: trace.truncated,
    steps: steps.map((step) => {
      const flag = flagOf(step);
      return {
        step,
        name: stepName(step, trace),
        clock: clockOf(step.startedAt),
        ...(flag ? { flag: step.error ? ("refused" as const) : ("uncertain" as const) } : {}),
      };
    }),
    snapshots,
    images: srcs,
  };
}

/**
 * JSON safe inside a <script> data block: no `<` (so no `</script>` or `<!--`),
 * and no U+2028/9 (line terminators to older JavaScript parsers).
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

export function renderTraceHtml(trace: ReadTrace, options: ViewOptions = {}): string {
  const images = options.images ?? "inline";
  const data = viewData(trace, images);
  const csp = `default-src 'none'; img-src data:${images === "files" ? " file:" : ""}; style-src 'unsafe-inline'; script-src 'unsafe-inline'`;
  const summary = `run ${data.runId} · ${data.steps.length} steps · ${data.platform} · ${data.createdAt}${data.truncated ? " · truncated (the last line was cut short)" : ""}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<title>axsnap trace ${escapeHtml(data.runId)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<nav aria-label="Steps">
<header>${escapeHtml(summary)}</header>
<ol id="steps" role="listbox" aria-label="Steps" tabindex="0"></ol>
</nav>
<main id="step" aria-labelledby="step-title"></main>
<script type="application/json" id="trace">${jsonForScript(data)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
