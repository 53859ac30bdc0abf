/**
 * The agent's desktop (Linux, X11): a private headless desktop an agent
 * observes and acts on without touching the user's pointer, focus or
 * windows. docs/desktop.md says why and how.
 */
export { type DesktopListing, exportLines, listDesktops, stopDesktop } from "./desktops.js";
export { type AgentDesktop, type StartDesktopOptions, startDesktop } from "./start.js";
export type { DesktopState, ProcessId } from "./state.js";
export { type DesktopRef, useDesktop } from "./use.js";
