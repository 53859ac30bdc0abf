/**
 * Action names: which actions are primary (the element's click) and so not
 * listed, and the pretty names agents see in `Secondary Actions:`. macOS names
 * are AX action constants (AXActionConstants.h) plus custom actions whose
 * names arrive as `Name:<pretty>\nTarget:...\nSelector:...`; Linux names are
 * AT-SPI action names (`click`, `press`, `activate`, `expand or contract`).
 */
import type { RawNode } from "../model/model.js";
import { isMenuish, isScrollArea, isScrollBar } from "./roles.js";

const PRIMARY = new Set([
  "AXPress",
  "AXShowDefaultUI",
  "AXShowAlternateUI",
  "AXShowMenu",
  "AXConfirm",
  "AXScrollToVisible",
  // AT-SPI: the activation actions of buttons, check boxes, menu items and links.
  "click",
  "press",
  "activate",
  "toggle",
  "jump",
  // Chromium on AT-SPI: its default action and its context menu, on every node.
  "doDefault",
  "showContextMenu",
]);
const PRIMARY_ON_MENUS = new Set(["AXCancel", "AXPick"]);
// AT-SPI names arrive raw ("click") or localized ("Click"): compared without case.
const PRIMARY_LOWER = new Set([...PRIMARY].filter((a) => !a.startsWith("AX")).map((a) => a.toLowerCase()));

function isPrimary(name: string): boolean {
  return PRIMARY.has(name) || (!name.startsWith("AX") && PRIMARY_LOWER.has(name.toLowerCase()));
}

/** Actions that press an element: what makes an anonymous container a button. */
const PRESS = new Set(["AXPress", "AXConfirm", "AXOpen", "click", "press", "activate"]);
const PRESS_LOWER = new Set(["click", "press", "activate"]);

const SPECIAL_PRETTY: Record<string, string> = {
  AXZoomWindow: "zoom the window",
  AXRaise: "Raise",
};

/**
 * GTK 4 names an element's actions after the GActions of its widget's action groups, `group.name`
 * (no other toolkit puts a dot in one): the window's own are worth a word; the rest are listed
 * nowhere, since they are the plumbing of context menus and shortcuts on every label and entry
 * (`clipboard.copy`, `selection.select-all`, `link.open`, `menu.popup`) or the app's commands
 * (`win.print`, `view.select-all`: forty on Files' window) that its buttons and menus show. Each stays
 * callable by its raw name or its words (`print`).
 */
const GTK4_ACTION = /^[a-z][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*$/;
const GTK4_LISTED: Record<string, string> = {
  "window.close": "close",
  "window.minimize": "minimize",
  "window.toggle-maximized": "toggle maximized",
};

/** A GTK 4 action name that no line lists (see GTK4_ACTION). */
function isUnlistedGtk4Action(raw: string): boolean {
  return GTK4_ACTION.test(raw) && !Object.hasOwn(GTK4_LISTED, raw);
}

const CUSTOM_NAME = /^Name:(.*?)(?:\r?\n|$)/;
const SPLIT_CAMEL = /([a-z])([A-Z])/g;

/** `AXScrollDownByPage` → `Scroll Down`; custom `Name:show details\n...` → `show details`. */
export function prettyActionName(raw: string): string {
  if (Object.hasOwn(SPECIAL_PRETTY, raw)) return SPECIAL_PRETTY[raw]!;
  if (Object.hasOwn(GTK4_LISTED, raw)) return GTK4_LISTED[raw]!;
  if (GTK4_ACTION.test(raw)) return raw.slice(raw.indexOf(".") + 1).replaceAll(/[-_]/g, " ");
  const custom = CUSTOM_NAME.exec(raw);
  if (custom) return (custom[1] ?? "").trim();
  if (raw.startsWith("AX")) return raw.slice(2).replace("ByPage", "").replace(SPLIT_CAMEL, "$1 $2").trim();
  return raw.trim();
}

/** Actions every element of some toolkits carries (Chromium puts them on every web node): they say nothing. */
const INCIDENTAL = new Set([
  "AXShowMenu",
  "AXScrollToVisible",
  "AXShowDefaultUI",
  "AXShowAlternateUI",
  "doDefault",
  "showContextMenu",
]);
const INCIDENTAL_LOWER = new Set(["dodefault", "showcontextmenu"]);

export function hasMeaningfulAction(node: RawNode): boolean {
  // An AX name lowercased never matches the lowercase AT-SPI names: only those are lowercased.
  return (
    node.actions?.some(
      (a) =>
        !INCIDENTAL.has(a) &&
        (a.startsWith("AX") || !INCIDENTAL_LOWER.has(a.toLowerCase())) &&
        !isUnlistedGtk4Action(a),
    ) ?? false
  );
}

export function hasPressAction(node: RawNode): boolean {
  return (
    node.actions?.some((a) => PRESS.has(a) || (!a.startsWith("AX") && PRESS_LOWER.has(a.toLowerCase()))) ??
    false
  );
}

/**
 * The actions listed after `Secondary Actions:`, deduplicated by pretty name.
 *
 * The spec drops left/right from a scroll area that pages up and down; the
 * recorded official output keeps them on Activity Monitor, whose scroll area
 * also scrolls sideways. Both agree when left/right are dropped only from a
 * scroll area without a horizontal scroll bar, which is the rule here.
 */
export function secondaryActions(node: RawNode): { raw: string[]; pretty: string[] } {
  const raw: string[] = [];
  const pretty: string[] = [];
  const actions = node.actions;
  if (!actions || actions.length === 0) return { raw, pretty };
  const menu = isMenuish(node);
  const dropSideways =
    isScrollArea(node) && actions.includes("AXScrollUpByPage") && !hasHorizontalScrollBar(node);
  for (const name of actions) {
    if (isPrimary(name) || (menu && PRIMARY_ON_MENUS.has(name))) continue;
    if (dropSideways && (name === "AXScrollLeftByPage" || name === "AXScrollRightByPage")) continue;
    if (isUnlistedGtk4Action(name)) continue;
    const p = prettyActionName(name);
    // A handful of names: a scan of the few kept is cheaper than a Set per element.
    if (p.length === 0 || pretty.includes(p)) continue;
    raw.push(name);
    pretty.push(p);
  }
  return { raw, pretty };
}

function hasHorizontalScrollBar(node: RawNode): boolean {
  return node.children?.some((c) => isScrollBar(c) && c.orientation === "horizontal") ?? false;
}

/** The first of `wanted` (in its order) that the element offers, matched in any case. */
export function findAction(actions: readonly string[], wanted: readonly string[]): string | undefined {
  for (const w of wanted) {
    const hit = actions.find((a) => a.toLowerCase() === w.toLowerCase());
    if (hit !== undefined) return hit;
  }
  return undefined;
}
