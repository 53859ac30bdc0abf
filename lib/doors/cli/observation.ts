/**
 * What a command line asks the library to observe: the render and view
 * options of a step, its screenshot, and the options of a snapshot command.
 * One place for the runner (commands.ts) and for the walk the CLI starts
 * before the runner is loaded (cli.ts `startEarly`), so that both ask for the
 * same observation and the early walk is the one the command uses.
 */
import type { SnapshotOptions } from "../../observe/desktop.js";
import { normaliseRenderOptions } from "../../render/options.js";
import type { Step } from "./grammar.js";
import type { StoredOptions } from "./schema.js";

/** Stored options as the library takes them: a --window title becomes the `window` option. */
export function observation(o: StoredOptions, withWindow = true) {
  // The view (depth, skeleton, budget, root) is what was printed; a re-observation reads the whole window.
  const { window, depth: _d, skeleton: _s, maxTokens: _m, root: _r, ...render } = o;
  return withWindow && window !== undefined ? { ...render, window: { title: window } } : render;
}

/** A snapshot command's view options, for the library. */
export function viewOf(step: Step) {
  return {
    ...(step.depth === undefined ? {} : { depth: step.depth }),
    ...(step.skeleton === true ? { skeleton: true as const } : {}),
    ...(step.maxTokens === undefined ? {} : { maxTokens: step.maxTokens }),
  };
}

/** The screenshot a step asks for: --screenshot FILE, with --marks the element indices drawn on it. */
export function shotOf(step: Step): boolean | { marks: true } {
  if (step.screenshot === undefined) return false;
  return step.marks === true ? { marks: true } : true;
}

/** A step's render options, checked, as the store keeps them beside its snapshot. */
export function renderOptionsOf(step: Step): StoredOptions {
  const o = normaliseRenderOptions({
    ...(step.style === undefined ? {} : { style: step.style }),
    ...(step.textLimit === undefined ? {} : { textLimit: step.textLimit }),
    ...(step.maxNodes === undefined ? {} : { maxNodes: step.maxNodes }),
    ...(step.maxDepth === undefined ? {} : { maxDepth: step.maxDepth }),
  });
  return {
    style: o.style,
    textLimit: o.textLimit,
    maxNodes: o.maxNodes,
    maxDepth: o.maxDepth,
    ...(step.window === undefined ? {} : { window: step.window }),
    ...(step.ocr === undefined ? {} : { ocr: step.ocr }),
    ...viewOf(step),
    ...(typeof step.root === "string" ? { root: step.root } : {}),
  };
}

/** The library options of `axsnap snapshot`: of `app`, or under the ref `root` of a snapshot the session holds. */
export function snapshotOptionsOf(step: Step, app: string | number, root?: string): SnapshotOptions {
  return {
    app,
    screenshot: shotOf(step),
    ...observation(renderOptionsOf(step), root === undefined),
    ...viewOf(step),
    ...(root === undefined ? {} : { root }),
    ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
  };
}
