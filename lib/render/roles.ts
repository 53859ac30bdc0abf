/**
 * Role classification for both platforms. macOS roles are AXRole/AXSubrole
 * (see Apple's "Roles" and "Subroles" constants in AXRoleConstants.h); Linux
 * roles are AT-SPI role names (atspi_role_get_name), spelled with spaces or
 * dashes. Every renderer rule asks these predicates, never a role string.
 */
import { HIDDEN_COORDINATE, type RawNode } from "../model/model.js";
import { normalizeForMatch } from "../model/policy/normalize.js";

const dashed = new Map<string, string>();

/** The role with AT-SPI's dashed spelling normalised to spaces; AX roles pass straight through. */
function roleKey(node: RawNode): string {
  const role = node.role;
  if (role.charCodeAt(0) === 65 /* A */ && role.charCodeAt(1) === 88 /* X */) return role;
  if (role.indexOf("-") < 0) return role;
  let key = dashed.get(role);
  if (key === undefined) {
    key = role.replace(/-/g, " ");
    if (dashed.size < 1024) dashed.set(role, key);
  }
  return key;
}

function isAx(node: RawNode): boolean {
  return node.role.startsWith("AX");
}

const GENERIC_AX = new Set(["AXGroup", "AXUnknown"]);
const GENERIC_ATSPI = new Set(["filler", "panel", "section", "unknown", "invalid"]);

/** Containers that carry no meaning of their own and may be elided. */
export function isGenericContainer(node: RawNode): boolean {
  if (isAx(node)) return GENERIC_AX.has(node.role) && node.subrole !== "AXTabButton";
  const role = roleKey(node);
  // An AT-SPI section with a name is a landmark-like region, not a wrapper.
  if (role === "section") return !node.title;
  return GENERIC_ATSPI.has(role);
}

export function isWebArea(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXWebArea" || role === "document web" || role === "document frame";
}

export function isRow(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXRow" || role === "table row" || role === "list item" || role === "tree item";
}

/** GTK tree views expose their cells directly under the table, without rows. */
export function isCell(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXCell" || role === "table cell";
}

/**
 * Elements an agent acts on: what an unselected row still numbers under it
 * (the recorded official output keeps a row's switch or disclosure triangle).
 */
export function isInteractive(node: RawNode): boolean {
  if (isStaticText(node) || isImage(node) || isGenericContainer(node) || isCell(node)) return false;
  return (
    (node.actions?.length ?? 0) > 0 ||
    node.settable === true ||
    isCheckbox(node) ||
    isRadio(node) ||
    isLink(node)
  );
}

export function isList(node: RawNode): boolean {
  const role = roleKey(node);
  return (
    role === "AXTable" ||
    role === "AXOutline" ||
    role === "AXList" ||
    role === "AXBrowser" ||
    role === "table" ||
    role === "tree table" ||
    role === "tree" ||
    role === "list" ||
    role === "list box"
  );
}

/** Lists whose every child is an item (AXList, AT-SPI list/list box), as opposed to tables of rows. */
export function isItemList(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXList" || role === "list" || role === "list box";
}

export function isTextField(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXTextField" || role === "entry" || role === "text";
}

/** AX tables list their cells again under AXColumn; printing both would double every cell. */
export function isColumn(node: RawNode): boolean {
  return node.role === "AXColumn";
}

export function isStaticText(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXStaticText" || role === "label" || role === "static" || role === "caption";
}

export function isImage(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXImage" || role === "image" || role === "icon";
}

export function isLink(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXLink" || role === "link";
}

/** Roles a person types text into: text fields and areas, password text, combo boxes, spin buttons. */
export function isTextEntry(node: RawNode): boolean {
  if (isTextField(node)) return true;
  const role = roleKey(node);
  return (
    role === "AXTextArea" ||
    role === "AXComboBox" ||
    role === "password text" ||
    role === "combo box" ||
    role === "spin button"
  );
}

/**
 * Controls that a label beside them names when the app ties none to them
 * (render/labels.ts): text entries, sliders, pop-up buttons, steppers.
 */
export function takesLabel(node: RawNode): boolean {
  // One lookup, both AT-SPI spellings: the label pass asks this of every node of the window.
  return LABELLED_ROLES.has(node.role);
}
const LABELLED_ROLES = new Set([
  ...["AXTextField", "AXTextArea", "AXComboBox", "AXSlider", "AXPopUpButton", "AXIncrementor"],
  ...["entry", "text", "password text", "combo box", "spin button", "slider"],
  ...["password-text", "combo-box", "spin-button"],
]);

/**
 * What a field says of itself: secure when the platform says so (secure
 * subrole, password role, the secure state the backends set for password
 * inputs, and the state withoutSecrets() writes) or, unless `byName` is false
 * (render option `secureNames: false`), when its name says it holds a password
 * (secureByName). Only part of the decision: a label beside an unnamed field
 * can make it secure too, which needs the tree (secure.ts decides it all).
 */
export function secureInItself(node: RawNode, byName = true): boolean {
  return (
    node.subrole === "AXSecureTextField" ||
    node.states?.secure === true ||
    roleKey(node) === "password text" ||
    (byName && secureByName(node))
  );
}

/** Words that name a secret as a word of their own (not "Spinner", "pinned", "Passport"). */
const SECRET_WORDS = [
  "password",
  "passwords",
  "passwd",
  "passcode",
  "passphrase",
  "pin",
  "pincode",
  "passwort",
  "kennwort",
  "mot de passe",
  "contraseña",
  "senha",
  "пароль",
];
/** Scripts written without spaces: the word anywhere in the name. */
const SECRET_INFIXES = ["密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호"];
const regexpSource = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// Matched on the normalised name (see policy/normalize.ts), so the words are normalised the same way.
const SECRET_NAME = new RegExp(
  `(?:^|[^\\p{L}\\p{N}])(?:${SECRET_WORDS.map((w) => regexpSource(normalizeForMatch(w))).join("|")})(?![\\p{L}\\p{N}])|${SECRET_INFIXES.map((w) => regexpSource(normalizeForMatch(w))).join("|")}`,
  "u",
);
// Longer labels are sentences, not field names; the cap bounds the work on a hostile name.
const SECRET_NAME_SCAN = 200;

/**
 * Names already judged: normalising is the costly part, a line asks twice
 * (its record and its value), and a window's names repeat in every rendering
 * of it. Bounded: cleared when full.
 */
const judged = new Map<string, boolean>();
const JUDGED_MAX = 4096;

function saysSecret(text: string | undefined): boolean {
  if (text === undefined || text.length === 0) return false;
  let says = judged.get(text);
  if (says === undefined) {
    says = SECRET_NAME.test(
      normalizeForMatch(text.length > SECRET_NAME_SCAN ? text.slice(0, SECRET_NAME_SCAN) : text),
    );
    if (judged.size >= JUDGED_MAX) judged.clear();
    judged.set(text, says);
  }
  return says;
}

/** A label's text says password, PIN or 密码, as a field's own name would (secureByName). */
export function namesSecret(text: string): boolean {
  return saysSecret(text);
}

/**
 * A text-entry field whose title, description or placeholder says password,
 * passcode, PIN or 密码 (after the same normalisation as destructive names,
 * so "Pass\u00ADword" and a Cyrillic "Pаssword" count). Apps that draw their
 * own password fields often forget the secure role; their name still says it.
 */
export function secureByName(node: RawNode): boolean {
  if (!isTextEntry(node)) return false;
  return saysSecret(node.title) || saysSecret(node.description) || saysSecret(node.placeholder);
}

export function isSearchField(node: RawNode): boolean {
  return node.subrole === "AXSearchField";
}

export function isCheckbox(node: RawNode): boolean {
  const role = roleKey(node);
  return (
    role === "AXCheckBox" ||
    role === "check box" ||
    role === "check menu item" ||
    role === "toggle button" ||
    role === "switch"
  );
}

export function isRadio(node: RawNode): boolean {
  const role = roleKey(node);
  return (
    (role === "AXRadioButton" && node.subrole !== "AXTabButton") ||
    role === "radio button" ||
    role === "radio menu item"
  );
}

export function isTab(node: RawNode): boolean {
  return node.subrole === "AXTabButton" || roleKey(node) === "page tab";
}

export function isMenu(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXMenu" || role === "menu";
}

/** Not on screen: AT-SPI's hidden state or its off-screen coordinates, or a closed AX menu. */
export function isHidden(node: RawNode): boolean {
  if (node.states?.visible === false) return true;
  const f = node.frame;
  if (f === undefined) return false;
  if (f.x === HIDDEN_COORDINATE || f.y === HIDDEN_COORDINATE) return true;
  // Closed AX menus stay in the tree with a 0×0 frame.
  return isMenu(node) && (f.w <= 0 || f.h <= 0);
}

export function isMenuish(node: RawNode): boolean {
  const role = roleKey(node);
  return (
    role === "AXMenu" ||
    role === "AXMenuItem" ||
    role === "AXMenuBarItem" ||
    role === "menu" ||
    role === "menu item"
  );
}

export function isMenuBarItem(node: RawNode): boolean {
  return node.role === "AXMenuBarItem";
}

export function isScrollArea(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXScrollArea" || role === "scroll pane";
}

export function isScrollBar(node: RawNode): boolean {
  const role = roleKey(node);
  return role === "AXScrollBar" || role === "scroll bar";
}

/** Roles whose description is their name when the title is empty. */
export function usesDescriptionAsTitle(node: RawNode): boolean {
  const role = roleKey(node);
  switch (role) {
    case "AXButton":
    case "AXPopUpButton":
    case "AXMenuButton":
    case "AXImage":
    case "AXGroup":
    case "AXWebArea":
    case "push button":
    case "toggle button":
    case "combo box":
    case "image":
    case "icon":
    case "panel":
    case "filler":
    case "section":
    case "document web":
      return true;
    default:
      return false;
  }
}

/**
 * Roles whose value prints bare, without `Value:`. The spec lists static text
 * without a title, text areas, scroll bars, value indicators and disclosure
 * triangles; the recorded official outputs also print splitters bare
 * (`24 splitter (disabled, settable, float) 185`), so splitters are added here.
 */
export function printsBareValue(node: RawNode): boolean {
  const role = roleKey(node);
  switch (role) {
    case "AXTextArea":
    case "AXScrollBar":
    case "AXValueIndicator":
    case "AXDisclosureTriangle":
    case "AXSplitter":
    case "scroll bar":
    case "split pane":
      return true;
    case "AXStaticText":
      return !node.title;
    default:
      return false;
  }
}

const SPLIT_CAMEL = /([a-z])([A-Z])/g;

/** The lowercase role text printed at the start of a line. Empty = print no role. */
export function roleText(node: RawNode): string {
  switch (node.role) {
    case "AXGroup":
      return "container";
    case "AXRow":
      return "row";
    case "AXLink":
      return "link";
    case "AXWebArea":
      return "HTML content";
    case "AXMenuBarItem":
      // The contract's example prints menu bar items by title alone ("4 TextEdit").
      return "";
  }
  if (node.roleDescription !== undefined) return node.roleDescription.toLowerCase();
  if (isAx(node)) return node.role.slice(2).replace(SPLIT_CAMEL, "$1 $2").toLowerCase();
  return roleKey(node).toLowerCase();
}

const COMPACT_AX: Record<string, string> = {
  AXWindow: "window",
  AXStaticText: "text",
  AXTextField: "textbox",
  AXTextArea: "textarea",
  AXGroup: "group",
  AXUnknown: "group",
  AXCheckBox: "checkbox",
  AXRadioButton: "radio",
  AXPopUpButton: "popup",
  AXMenuButton: "menubutton",
  AXScrollArea: "scroll",
  AXScrollBar: "scrollbar",
  AXWebArea: "web",
  AXTabGroup: "tabs",
  AXSplitGroup: "split",
  AXMenuBar: "menubar",
  AXMenuBarItem: "menu",
  AXMenuItem: "menuitem",
  AXDisclosureTriangle: "disclosure",
  AXValueIndicator: "indicator",
  AXIncrementor: "stepper",
  AXComboBox: "combobox",
  AXRadioGroup: "radiogroup",
  AXProgressIndicator: "progress",
};
const COMPACT_SUBROLE: Record<string, string> = {
  AXCloseButton: "close",
  AXMinimizeButton: "minimize",
  AXZoomButton: "zoom",
  AXFullScreenButton: "fullscreen",
  AXSecureTextField: "password",
  AXSearchField: "searchbox",
  AXSwitch: "switch",
  AXTabButton: "tab",
};
const COMPACT_ATSPI: Record<string, string> = {
  frame: "window",
  "push button": "button",
  "toggle button": "toggle",
  "check box": "checkbox",
  "radio button": "radio",
  text: "textbox",
  entry: "textbox",
  "password text": "password",
  label: "text",
  static: "text",
  filler: "group",
  panel: "group",
  section: "group",
  "combo box": "combobox",
  "page tab": "tab",
  "page tab list": "tabs",
  "menu item": "menuitem",
  "check menu item": "menuitem",
  "radio menu item": "menuitem",
  "menu bar": "menubar",
  "scroll pane": "scroll",
  "scroll bar": "scrollbar",
  "table cell": "cell",
  "table row": "row",
  "list item": "item",
  "tree item": "item",
  "tree table": "treetable",
  "document web": "web",
  "document frame": "web",
  "spin button": "spin",
  "progress bar": "progress",
  "table column header": "columnheader",
  "column header": "columnheader",
};

/**
 * The compact style's role: one short word from the platform role, where the
 * tree style prints the localised role description ("search text field" →
 * "searchbox"). The record keeps the tree style's role text either way.
 */
export function compactRole(node: RawNode): string {
  // Object.hasOwn: a role named "constructor" must not find Object.prototype's.
  const sub = node.subrole;
  if (sub !== undefined && Object.hasOwn(COMPACT_SUBROLE, sub)) return COMPACT_SUBROLE[sub]!;
  if (isAx(node))
    return Object.hasOwn(COMPACT_AX, node.role) ? COMPACT_AX[node.role]! : node.role.slice(2).toLowerCase();
  const role = roleKey(node);
  return Object.hasOwn(COMPACT_ATSPI, role) ? COMPACT_ATSPI[role]! : role.replace(/ /g, "");
}
