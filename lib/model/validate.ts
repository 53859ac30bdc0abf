/**
 * Checks that an unknown value is a RawSnapshot before anything renders it.
 * A fixture file, a JSON message or a buggy backend can hand us anything:
 * missing fields, wrong types, or a node object reachable twice (a cycle, or
 * children shared between parents). Each of those is an INVALID_ARGUMENT that
 * names the offending path; nothing is rendered from a tree that is not one.
 * Iterative, so a deep tree cannot overflow the stack here.
 */
import { AxsnapError, invalidArgument } from "./errors.js";
import { MAX_TREE_DEPTH, type RawSnapshot } from "./model.js";

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fail(path: string, what: string): never {
  throw invalidArgument(
    `invalid snapshot tree at ${path}: ${what}`,
    "pass a RawSnapshot as produced by a backend or a fixture file; see lib/model/model.ts",
  );
}

function finite(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function checkRect(v: unknown, path: string): void {
  if (!isObj(v)) fail(path, "expected a rect {x, y, w, h}");
  for (const k of ["x", "y", "w", "h"] as const)
    if (!finite(v[k])) fail(`${path}.${k}`, "expected a finite number");
}

const STATE_KEYS = new Set([
  "enabled",
  "focused",
  "focusable",
  "selected",
  "selectable",
  "expanded",
  "minimized",
  "secure",
  "required",
  "invalid",
  "readonly",
  "multiline",
  "editable",
  "modal",
  "visible",
]);
const VALUE_TYPES = new Set(["string", "number", "boolean"]);
const SOURCES = new Set(["children", "rows", "visibleRows", "contents", "visibleChildren"]);
const WALK_ENDS = new Set([
  "complete",
  "node_limit",
  "depth_limit",
  "deadline",
  "content_pending",
  "unresponsive",
  "errors",
]);
const PLATFORMS = new Set(["macos", "linux", "fake"]);

function checkStates(s: unknown, path: string): void {
  if (!isObj(s)) fail(`${path}.states`, "expected an object");
  for (const k in s) {
    const v = s[k];
    if (v === undefined) continue;
    if (k === "checked") {
      if (typeof v !== "boolean" && v !== "mixed")
        fail(`${path}.states.checked`, 'expected a boolean or "mixed"');
    } else if (STATE_KEYS.has(k) && typeof v !== "boolean") {
      fail(`${path}.states.${k}`, "expected a boolean");
    }
  }
}

/**
 * Checks one node's own fields. It walks the keys the node has rather than
 * every key the model knows: most fields are absent on most nodes, and this
 * runs on every node of every snapshot. Unknown keys are ignored, so a newer
 * backend's extra fields do not break an older renderer.
 */
function checkNode(n: Obj, path: string): void {
  if (typeof n.role !== "string") fail(`${path}.role`, "expected a string");
  for (const k in n) {
    const v = n[k];
    if (v === undefined) continue;
    switch (k) {
      case "role":
        break;
      case "subrole":
      case "roleDescription":
      case "title":
      case "description":
      case "help":
      case "identifier":
      case "url":
      case "placeholder":
      case "selectedText":
      case "valueText":
        if (typeof v !== "string") fail(`${path}.${k}`, `expected a string, got ${typeof v}`);
        break;
      case "value":
        if (typeof v !== "string" && typeof v !== "boolean" && !finite(v))
          fail(`${path}.value`, "expected a string, a finite number or a boolean");
        break;
      case "valueType":
        if (!VALUE_TYPES.has(v as string))
          fail(`${path}.valueType`, 'expected "string", "number" or "boolean"');
        break;
      case "settable":
        if (typeof v !== "boolean") fail(`${path}.settable`, "expected a boolean");
        break;
      case "charCount":
      case "rowIndex":
      case "rowCount":
      case "handle":
        if (!finite(v) || !Number.isInteger(v) || v < 0) fail(`${path}.${k}`, "expected an integer >= 0");
        break;
      case "orientation":
        if (v !== "horizontal" && v !== "vertical")
          fail(`${path}.orientation`, 'expected "horizontal" or "vertical"');
        break;
      case "via":
        if (!SOURCES.has(v as string)) fail(`${path}.via`, "expected a child source name");
        break;
      case "frame":
        checkRect(v, `${path}.frame`);
        break;
      case "actions":
        if (!Array.isArray(v)) fail(`${path}.actions`, "expected an array of strings");
        for (let i = 0; i < v.length; i++)
          if (typeof v[i] !== "string") fail(`${path}.actions[${i}]`, "expected a string");
        break;
      case "labelledBy":
        if (!Array.isArray(v)) fail(`${path}.labelledBy`, "expected an array of handles");
        for (let i = 0; i < v.length; i++)
          if (!finite(v[i]) || !Number.isInteger(v[i]) || v[i] < 0)
            fail(`${path}.labelledBy[${i}]`, "expected an integer >= 0");
        break;
      case "states":
        checkStates(v, path);
        break;
      case "ocr":
        if (!isObj(v) || !finite(v.confidence) || v.confidence < 0 || v.confidence > 1)
          fail(`${path}.ocr`, "expected { confidence } with a confidence from 0 to 1");
        if (v.ink !== undefined && typeof v.ink !== "string") fail(`${path}.ocr.ink`, "expected a string");
        if (v.unsure !== undefined && v.unsure !== true)
          fail(`${path}.ocr.unsure`, "expected true when present");
        break;
      case "children":
        if (!Array.isArray(v)) fail(`${path}.children`, "expected an array");
        break;
    }
  }
}

interface Frame {
  node: unknown;
  parent: Frame | undefined;
  index: number;
  depth: number;
}

/** The path of a frame, built only when it is needed for a message. */
function pathOf(frame: Frame, rootPath: string): string {
  const parts: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent)
    parts.push(`.children[${f.index}]`);
  return rootPath + parts.reverse().join("");
}

/** Validates a whole tree; a node reached twice is a cycle or a shared child. */
function checkTree(root: unknown, rootPath: string, seen: Set<object>): void {
  const stack: Frame[] = [{ node: root, parent: undefined, index: 0, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    if (!isObj(node)) fail(pathOf(frame, rootPath), "expected a node object");
    if (seen.has(node))
      fail(pathOf(frame, rootPath), "this node object appears twice in the tree (a cycle or a shared child)");
    seen.add(node);
    if (frame.depth > MAX_TREE_DEPTH)
      fail(pathOf(frame, rootPath), `the tree is deeper than ${MAX_TREE_DEPTH} levels`);
    try {
      checkNode(node, "");
    } catch (e) {
      // checkNode names the field; the path to the node is added here, only on failure.
      if (e instanceof AxsnapError)
        throw invalidArgument(e.message.replace(" at .", ` at ${pathOf(frame, rootPath)}.`), e.hint);
      throw e;
    }
    const children = node.children as unknown[] | undefined;
    if (children)
      for (let i = children.length - 1; i >= 0; i--)
        stack.push({ node: children[i], parent: frame, index: i, depth: frame.depth + 1 });
  }
}

export function validateRawSnapshot(input: unknown): RawSnapshot {
  if (!isObj(input)) fail("$", "expected a snapshot object");
  if (input.version !== 1) fail("$.version", "expected 1");
  if (!PLATFORMS.has(input.platform as string)) fail("$.platform", 'expected "macos", "linux" or "fake"');
  const app = input.app;
  if (!isObj(app)) fail("$.app", "expected an object");
  if (typeof app.name !== "string") fail("$.app.name", "expected a string");
  if (app.bundleId !== undefined && typeof app.bundleId !== "string")
    fail("$.app.bundleId", "expected a string");
  if (!finite(app.pid) || !Number.isInteger(app.pid)) fail("$.app.pid", "expected an integer");
  const win = input.window;
  if (!isObj(win)) fail("$.window", "expected an object");
  if (typeof win.title !== "string") fail("$.window.title", "expected a string");
  checkRect(win.frame, "$.window.frame");
  if (!finite(win.scale) || win.scale <= 0) fail("$.window.scale", "expected a positive number");
  for (const key of ["kind", "role", "id"] as const)
    if (win[key] !== undefined && typeof win[key] !== "string") fail(`$.window.${key}`, "expected a string");
  if (win.modal !== undefined && typeof win.modal !== "boolean") fail("$.window.modal", "expected a boolean");
  const walk = input.walk;
  if (!isObj(walk)) fail("$.walk", "expected an object");
  if (!WALK_ENDS.has(walk.ended as string))
    fail("$.walk.ended", `expected one of ${[...WALK_ENDS].join(", ")}`);
  if (!finite(walk.nodesObserved) || (walk.nodesObserved as number) < 0)
    fail("$.walk.nodesObserved", "expected a number >= 0");
  if (
    walk.notes !== undefined &&
    (!Array.isArray(walk.notes) || walk.notes.some((x) => typeof x !== "string"))
  )
    fail("$.walk.notes", "expected an array of strings");
  const seen = new Set<object>();
  checkTree(input.root, "$.root", seen);
  if (input.menuBar !== undefined) checkTree(input.menuBar, "$.menuBar", seen);
  return input as unknown as RawSnapshot;
}
