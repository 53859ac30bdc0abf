/**
 * What a key combination can do to the element that has focus, for the key
 * guards of the action layer (refs-and-actions.md, "Keys go where focus is").
 *
 * - Non-inserting combos move focus, the caret or the selection, or close
 *   something; they cannot put characters into a field, so they may reach a
 *   secure field (Tab out of a password box, Escape, arrows, select all).
 *   Everything else — a printable key, Backspace/Delete, a paste (ctrl+v,
 *   shift+Insert), an unknown name — is treated as inserting.
 * - Activating combos press the focused control or submit its form (Return,
 *   Enter, space): they go through the destructive-name guard even in a text
 *   field ("Send" on Enter).
 */

const NAVIGATION = new Set([
  "tab",
  "iso_left_tab",
  "escape",
  "esc",
  "up",
  "down",
  "left",
  "right",
  "arrowup",
  "arrowdown",
  "arrowleft",
  "arrowright",
  "home",
  "end",
  "page_up",
  "pageup",
  "prior",
  "pgup",
  "page_down",
  "pgdn",
  "pagedown",
  "next",
  "return",
  "enter",
  "kp_enter",
  ...Array.from({ length: 24 }, (_, i) => `f${i + 1}`),
]);
const SELECT_ALL_MODIFIERS = new Set(["ctrl", "control", "cmd", "command", "super", "meta"]);
const ACTIVATING = new Set(["return", "enter", "kp_enter", "space", " ", "kp_space"]);

/** The modifiers and the key of "ctrl+shift+t" (lower case; "+" itself as a key is "plus" or a trailing "+"). */
export function parseCombo(combo: string): { modifiers: string[]; key: string } {
  const trimmed = combo.trim();
  if (trimmed === "+" || trimmed.endsWith("++")) {
    const mods = trimmed.slice(0, -1).split("+").filter(Boolean);
    return { modifiers: mods.map((m) => m.toLowerCase()), key: "+" };
  }
  const parts = trimmed.split("+");
  const key = (parts.pop() ?? "").toLowerCase();
  return { modifiers: parts.map((m) => m.trim().toLowerCase()).filter(Boolean), key };
}

/** True when the combo cannot insert text into the focused field. */
export function nonInserting(combo: string): boolean {
  const { modifiers, key } = parseCombo(combo);
  if (NAVIGATION.has(key)) return true;
  return key === "a" && modifiers.length === 1 && SELECT_ALL_MODIFIERS.has(modifiers[0]!);
}

/** True when the combo presses the focused control or submits (Return, Enter, space). */
export function activating(combo: string): boolean {
  return ACTIVATING.has(parseCombo(combo).key);
}

/** True when typed text presses or submits: a line break anywhere, or (outside a text field) a space. */
export function textActivates(text: string, inTextField: boolean): boolean {
  return /[\r\n]/.test(text) || (!inTextField && text.includes(" "));
}
