/**
 * The library's hint phrasings that name its own calls and options, which
 * each door rewrites into its words: the CLI's commands and flags
 * (cliHint, lib/doors/cli/output.ts), the MCP server's tools and arguments
 * (mcpHint, lib/doors/mcp/hints.ts). One regex per phrasing, so a library hint
 * reworded here is reworded for both doors. Global regexes: `replace`
 * starts each from the beginning.
 */
export const LIBRARY_PHRASES = {
  openCollapsed:
    /open it with root "(@[^"\s]+)" \(get_app_state root, `axsnap snapshot --root`, snapshot\(\{ root \}\)\)/g,
  passWindow:
    /pass window: \{ title: "Save" \}, \{ index: 1 \} or \{ id: "…" \}; listWindows\(app\) lists them/g,
  ambiguousWindow: /pass the window's index or id from listWindows\(app\), or its whole title/g,
  withoutWindowOption: /take a snapshot without the window option/g,
  listWindows: /listWindows(?:\(app\))?/g,
  waitObserved: /the error's `observed` snapshot shows the app as last seen; act on it, or wait longer/g,
  byIndex: /act (?:on an element )?by (?:its )?index/g,
  confirmCallback: /create the session with a confirm callback/g,
  withScreenshot: /take a snapshot with screenshot: true/g,
  refsLiveWithSession:
    /refs live as long as the session that took the snapshot; take a new snapshot in this session and use its refs/g,
  takeSnapshot: /take a (?:new )?snapshot/gi,
  listApps: /listApps\(\)/g,
  listLaunchable: /listLaunchable\(\)/g,
  launchPath: /launchApp\("\/path\/to\/program", \{ args \}\)/g,
  snapshotOfPid: /snapshot\(\{ app: (\d+) \}\)/g,
  asPid: /as \{ app: <pid> \}/g,
  deadlineMs: /deadlineMs/g,
  timeoutMs: /timeoutMs/g,
  maxNodes: /maxNodes/g,
  maxDepth: /maxDepth/g,
} as const;
