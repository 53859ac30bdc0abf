/**
 * Notes in words: what an action's result says to an agent never carries
 * the D-Bus text a backend error may hold (`GDBus.Error:org.freedesktop.
 * DBus.Error.UnknownObject: Method "GetExtents" with signature "u" on
 * interface "org.a11y.atspi.Component" could not be processed as object
 * /org/a11y/atspi/accessible/348 does not exist`): an agent cannot act on an
 * error name or a bus address, and reads them as something to fix. Each
 * known D-Bus error becomes what it means for the element or the app; a
 * unique bus name (`:1.45`) becomes "the app".
 *
 * Platform-neutral and pure: text in, text out; text without D-Bus parts
 * comes back as it was.
 */

/** What a D-Bus error means to an agent, by the error's last name part. */
const MEANINGS: Record<string, string> = {
  UnknownObject: "it no longer exists",
  UnknownMethod: "the app does not offer that call there",
  UnknownInterface: "the app does not offer that call there",
  UnknownProperty: "the app does not offer that there",
  NotSupported: "the app does not support that",
  ServiceUnknown: "the app is no longer connected",
  NameHasNoOwner: "the app is no longer connected",
  Disconnected: "the app is no longer connected",
  NoReply: "the app did not answer",
  Timeout: "the app did not answer in time",
  TimedOut: "the app did not answer in time",
  InvalidArgs: "the app refused the request",
  AccessDenied: "the app refused the request",
  LimitsExceeded: "the app refused the request",
  NoMemory: "the app ran out of memory",
};

/** `GDBus.Error:<name>: <message>` up to the end of its line or a closing parenthesis. */
const GDBUS_ERROR = /GDBus\.Error:([\w.-]+)(?::[^\n)]*)?\n?/g;
/** GLib's words when a call's timeout passes. */
const GLIB_TIMEOUT = /Timeout was reached/g;
/** A unique bus name (`:1.45`), as native messages name the app they asked. */
const BUS_NAME = /(^|[\s(])(?:application |app )?:\d+\.\d+\b/g;
/** A message D-Bus added when the peer left before answering. */
const RECIPIENT_GONE = /Message recipient disconnected from message bus without replying/g;

function meaningOf(errorName: string): string {
  const last = errorName.slice(errorName.lastIndexOf(".") + 1);
  return MEANINGS[last] ?? "the app refused it";
}

/** `text` with every D-Bus error, GLib timeout and bus name said in words. */
export function inWords(text: string): string {
  if (!text.includes(":") && !text.includes("Timeout")) return text;
  let out = text
    .replace(GDBUS_ERROR, (_m, name: string) => meaningOf(name))
    .replace(RECIPIENT_GONE, "the app went away before answering")
    .replace(GLIB_TIMEOUT, "the app did not answer in time")
    .replace(BUS_NAME, (_m, lead: string) => `${lead}the app`);
  // "the element no longer exists (it no longer exists)": the words said twice are said once.
  out = out.replace(/ \(([^()]*)\)/g, (m, inner: string) => (saysAlready(out, inner) ? "" : m));
  return out.replace(/\s+$/, "");
}

/** Whether a parenthesised meaning only repeats what the sentence around it says. */
function saysAlready(sentence: string, inner: string): boolean {
  const core = inner.replace(/^it /, "").trim();
  if (core.length === 0) return true;
  const rest = sentence.replace(`(${inner})`, "");
  return rest.includes(core);
}
