/**
 * The MCP server's instructions: what every tool shares (targets, the
 * action reply's format, delivery and retry, refusals and the safety rules),
 * said once here and not in each tool's description. A client shows the
 * instructions once per conversation, where the tool list is paid on every
 * turn; test/doors/mcp-tool-list-tokens.test.ts bounds both and checks that
 * what an agent needs from this text is still in it.
 */

import { DEFAULT_DESTRUCTIVE_WORDS } from "../../session/act/guards.js";

/** The words whose targets are refused without --confirm-destructive, from the policy's own list. */
const english = DEFAULT_DESTRUCTIVE_WORDS.filter((w) => /^[a-z ]+$/.test(w));
const DESTRUCTIVE_WORDS = `${english.slice(0, -1).join(", ")} or ${english.at(-1)} (or the same in Chinese)`;

export const INSTRUCTIONS = `axsnap shows one window of a desktop app as numbered text lines, one UI element a line, plus a screenshot, and acts on exactly the element printed on a line.
Start with list_apps, then get_app_state; find_elements returns only the lines that match; wait_for waits instead of sleeping.
Targets (give one): element_index is the number starting a line of the app's latest snapshot (each observation and action reply makes its own the latest). A ref "@<snapshot id>:e<N>" names line N of the snapshot you read and is safer: if the UI changed since, the action is refused (STALE_REF, nothing sent). A locator names it by what it is, e.g. app=mousepad >> window:dialog="Save As" >> push button "Save": each >> step inside the one before, role as printed, then name (exact, or /regex/i), [nth=2] last; it waits up to 5 s; ELEMENT_NOT_FOUND and AMBIGUOUS_TARGET list candidates. x/y are pixels of the last screenshot you received of the app; a point whose element changed since is refused (STALE_REF) unless raw: true. app (name or pid) says whose latest snapshot an index or point means (default: the app observed last).
An action replies "<action> <ref>: <delivery> (<channel>), retry <retry>", notes, how the app settled, what opened or closed, then "snapshot <id>, changes since <old id>:" and only the changed lines, numbered as in snapshot <id>, now the latest ("- N" lines are gone, numbered as in <old id>; lines not shown kept their numbers unless it says otherwise), or "snapshot <id>: the whole window" (when a surface opened, or with reply: "full"; long ones shortened). screenshot: true attaches the picture; structuredContent holds the same as data.
delivery: "not_delivered" (nothing reached the app), "delivered_unverified" (sent: check the reply), "delivered_verified" (sent and read back), "delivery_uncertain" (it may have happened: look before repeating). retry: "safe" only when nothing was delivered; "unsafe": do not repeat it blindly. channel: "semantic" (the element's own action or value) or "synthetic" (mouse or key events).
A refusal or failure is an error result with code, message, hint, delivery and retry: follow the hint. Targets whose name says ${DESTRUCTIVE_WORDS} are refused (POLICY_DENIED) unless the user started the server with --confirm-destructive; secure fields (passwords, PINs) are never typed into or set. When refused, ask the user.`;
