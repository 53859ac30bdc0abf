/**
 * Checks that an unknown value is a RawSnapshot before anything renders it.
 * A fixture file, a JSON message or a buggy backend can hand us anything:
 * missing fields, wrong types, or a node object reachable twice (a cycle, or
 * children shared between parents). Each of those is an INVALID_ARGUMENT that
 * names the offending path; nothing is rendered from a tree that is not one.
 * Iterative, so a deep tree cannot overflow the stack here.
 */
import { invalidArgument } from "./errors.js";
import { MAX_TREE_DEPTH, type RawSnapshot } from "./model.js";

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fail(path: string, what: string): never {
  throw invalidArgument(
    `invalid snapshot tree at ${path}: ${what}`,
    "pass a RawSnapshot as produced by a backend or a fixture file; see lib/model.ts",
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

function optString(o: Obj, key: string, path: string): void {
  const v = o[key];
  if (v !== undefined && typeof v !== "string") fail(`${path}.${key}`, `expected a string, got ${typeof v}`);
}

const STRING_FIELDS = [
  "subrole",
  "roleDescription",
  "title",
  "description",
  "help",
  "identifier",
  "url",
  "placeholder",
  "selectedText",
] as const;
const STATE_BOOLEANS = [
  "enabled",
  "focused",
  "focusable",
  "selected",
  "selectable",
  "expanded",
  "minimized",
  "secure",
  "required",
  "readonly",
  "multiline",
  "editable",
  "modal",
  "visible",
] as const;
const VALUE_TYPES = new Set(["string", "number", "boolean"]);
const SOURCES = new Set(["children", "rows", "visibleRows", "contents", "visibleChildren"]);
const WALK_ENDS = new Set(["complete", "node_limit", "depth_limit", "deadline"]);
const PLATFORMS = new Set(["macos", "linux", "fake"]);

function checkNode(n: Obj, path: string): void {
  if (typeof n.role !== "string") fail(`${path}.role`, "expected a string");
  for (const k of STRING_FIELDS) optString(n, k, path);
  const v = n.value;
  if (v !== undefined && typeof v !== "string" && typeof v !== "boolean" && !finite(v))
    fail(`${path}.value`, "expected a string, a finite number or a boolean");
  if (n.valueType !== undefined && !VALUE_TYPES.has(n.valueType as string))
    fail(`${path}.valueType`, 'expected "string", "number" or "boolean"');
  if (n.settable !== undefined && typeof n.settable !== "boolean")
    fail(`${path}.settable`, "expected a boolean");
  for (const k of ["charCount", "rowIndex", "rowCount", "handle"] as const) {
    const x = n[k];
    if (x !== undefined && (!finite(x) || !Number.isInteger(x) || x < 0))
      fail(`${path}.${k}`, "expected an integer >= 0");
  }
  if (n.orientation !== undefined && n.orientation !== "horizontal" && n.orientation !== "vertical")
    fail(`${path}.orientation`, 'expected "horizontal" or "vertical"');
  if (n.via !== undefined && !SOURCES.has(n.via as string))
    fail(`${path}.via`, "expected a child source name");
  if (n.frame !== undefined) checkRect(n.frame, `${path}.frame`);
  if (n.actions !== undefined) {
    if (!Array.isArray(n.actions)) fail(`${path}.actions`, "expected an array of strings");
    for (let i = 0; i < n.actions.length; i++)
      if (typeof n.actions[i] !== "string") fail(`${path}.actions[${i}]`, "expected a string");
  }
  const s = n.states;
  if (s !== undefined) {
    if (!isObj(s)) fail(`${path}.states`, "expected an object");
    for (const k of STATE_BOOLEANS)
      if (s[k] !== undefined && typeof s[k] !== "boolean") fail(`${path}.states.${k}`, "expected a boolean");
    if (s.checked !== undefined && typeof s.checked !== "boolean" && s.checked !== "mixed")
      fail(`${path}.states.checked`, 'expected a boolean or "mixed"');
  }
  if (n.children !== undefined && !Array.isArray(n.children)) fail(`${path}.children`, "expected an array");
}

/** Validates a whole tree; a node reached twice is a cycle or a shared child. */
function checkTree(root: unknown, rootPath: string, seen: Set<object>): void {
  const stack: { node: unknown; path: string; depth: number }[] = [{ node: root, path: rootPath, depth: 0 }];
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (!isObj(node)) fail(path, "expected a node object");
    if (seen.has(node)) fail(path, "this node object appears twice in the tree (a cycle or a shared child)");
    seen.add(node);
    if (depth > MAX_TREE_DEPTH) fail(path, `the tree is deeper than ${MAX_TREE_DEPTH} levels`);
    checkNode(node, path);
    const children = node.children as unknown[] | undefined;
    if (children)
      for (let i = children.length - 1; i >= 0; i--)
        stack.push({ node: children[i], path: `${path}.children[${i}]`, depth: depth + 1 });
  }
}

export function validateRawSnapshot(input: unknown): RawSnapshot {
  if (!isObj(input)) fail("$", "expected a snapshot object");
  if (input.version !== 1) fail("$.version", "expected 1");
  if (!PLATFORMS.has(input.platform as string)) fail("$.platform", 'expected "macos", "linux" or "fake"');
  const app = input.app;
  if (!isObj(app)) fail("$.app", "expected an object");
  if (typeof app.name !== "string") fail("$.app.name", "expected a string");
  optString(app, "bundleId", "$.app");
  if (!finite(app.pid) || !Number.isInteger(app.pid)) fail("$.app.pid", "expected an integer");
  const win = input.window;
  if (!isObj(win)) fail("$.window", "expected an object");
  if (typeof win.title !== "string") fail("$.window.title", "expected a string");
  checkRect(win.frame, "$.window.frame");
  if (!finite(win.scale) || win.scale <= 0) fail("$.window.scale", "expected a positive number");
  const walk = input.walk;
  if (!isObj(walk)) fail("$.walk", "expected an object");
  if (!WALK_ENDS.has(walk.ended as string))
    fail("$.walk.ended", "expected complete, node_limit, depth_limit or deadline");
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
