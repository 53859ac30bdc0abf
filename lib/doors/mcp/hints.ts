/**
 * An error's hint in this server's words. The library writes its hints for
 * a program calling it (`listWindows(app)`, `{ app: 1234 }`, maxNodes, "take
 * a new snapshot"); a model over MCP can only call tools, so each phrasing
 * becomes the tool and argument that do the same. Applied to every tool's
 * error result (errorResult in tools.ts); test/doors/mcp-hints.test.ts passes
 * every hint the library writes through it.
 */
import { LIBRARY_PHRASES as P } from "../phrases.js";

/** Library phrasings → this server's tools and arguments; the more specific first. */
const PHRASES: [RegExp, string][] = [
  [P.openCollapsed, 'open it with get_app_state with root "$1"'],
  // get_app_state names a window by its title only.
  [P.passWindow, "pass window with a window's title (or part of one); list_windows lists them"],
  [P.ambiguousWindow, "pass window with the window's whole title (list_windows lists them)"],
  [
    /pass root to a session's snapshot \(the default session's, or one from createSession\) that took the snapshot it names/g,
    "pass root as a ref of a snapshot this server took",
  ],
  [
    P.refsLiveWithSession,
    "refs live as long as one MCP session (a stdio server's life, an HTTP session): call get_app_state on this server and act on the refs it prints; a client that starts a new server per call loses its refs between calls, so keep one server for the conversation, or use the axsnap CLI, whose refs last across processes",
  ],
  [P.withoutWindowOption, "call get_app_state without window"],
  [/take a snapshot without a screenshot/g, "call get_app_state with screenshot: false"],
  [P.withScreenshot, "call get_app_state with screenshot: true"],
  [/take a new snapshot of /gi, "call get_app_state for "],
  [P.takeSnapshot, "call get_app_state"],
  [P.listWindows, "list_windows"],
  [/\bfind searches/g, "find_elements searches"],
  [P.listLaunchable, "list_apps with launchable: true"],
  [P.listApps, "list_apps"],
  [P.launchPath, "launch_app with the program's path as app, on a server started with --allow-launch-paths"],
  [P.snapshotOfPid, "get_app_state with app $1"],
  // A timed-out wait's last observation is not in the error result: the model looks again.
  [
    P.waitObserved,
    "call get_app_state to see the app as it is now and act on that, or wait longer with a larger timeout_ms",
  ],
  [P.byIndex, "act on an element by its element_index or ref"],
  [P.asPid, "as app"],
  [/\{ app: ("[^"]*"|\d+) \}/g, "app: $1"],
  // The server's deadline is fixed: there is nothing to lengthen.
  [/, with a longer deadlineMs if it keeps happening/g, ""],
  [
    /, or create the session with a confirm callback/g,
    " (a server started with --confirm-destructive allows it)",
  ],
  // Over MCP the trace's place is the server's option (the user's), or start_trace's: never a path of the model's.
  [
    /e\.g\. createSession\(\{ trace: "[^"]*" \}\)/g,
    "call start_trace, or ask the user to start the server with --trace",
  ],
  [/ \(or createSession\(\{ trace \}\)\)/g, ""],
  [P.maxNodes, "max_tree_nodes"],
  [P.maxDepth, "max_tree_depth"],
  [/maxTokens/g, "max_tokens"],
  [P.timeoutMs, "timeout_ms"],
];

/** A hint in MCP terms. */
export function mcpHint(hint: string): string {
  let out = hint;
  for (const [re, to] of PHRASES) out = out.replace(re, to);
  return out;
}
