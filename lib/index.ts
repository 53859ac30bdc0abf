/**
 * axsnap: one window of one app as numbered text lines an agent can address,
 * plus a screenshot; actions that reach exactly the printed element.
 * This entry point exports the platform-neutral layer: the raw tree model,
 * the renderer, the Snapshot object and the error class.
 */

export {
  type ActionScreenshots,
  createMcpHttpServer,
  type McpCallCounts,
  type McpHttpHealth,
  type McpHttpServer,
  type McpHttpServerOptions,
  type McpHttpStatus,
  type ReplyMode,
} from "./doors/mcp-http.js";
export {
  AxsnapError,
  type AxsnapErrorOptions,
  type Delivery,
  ERROR_CODES,
  type ErrorCode,
  type LocatorCandidate,
  type Retry,
} from "./model/errors.js";
export type {
  ChildSource,
  OcrMark,
  Platform,
  RawApp,
  RawNode,
  RawSnapshot,
  RawStates,
  RawWalk,
  RawWindow,
  ReadStat,
  Rect,
  ValueType,
  WalkEnd,
} from "./model/model.js";
export { HIDDEN_COORDINATE, MAX_TREE_DEPTH } from "./model/model.js";
export { destructiveWordIn, normalizeForMatch } from "./model/policy/normalize.js";
export { validateRawSnapshot } from "./model/validate.js";
/** What a launchable entry is, as the backend lists it (LaunchableApp). */
export type { InputRoute, NativeLaunchable } from "./native.js";
export {
  type AgentDesktop,
  type DesktopListing,
  type DesktopRef,
  type DesktopState,
  listDesktops,
  type ProcessId,
  type StartDesktopOptions,
  startDesktop,
  stopDesktop,
  useDesktop,
} from "./observe/agent-desktop/index.js";
export {
  listApps,
  listWindows,
  type ObservationOptions,
  type PermissionState,
  type PermissionStatus,
  permissions,
  requestPermissions,
  type SnapshotOptions,
} from "./observe/desktop.js";
export { type Change, type ChangedField, diffSnapshots, type SnapshotChanges } from "./observe/diff.js";
export type {
  AppWithoutTree,
  LinuxDesktopReport,
  NoTreeCause,
  WaylandCompositor,
  WaylandRoute,
  WaylandRoutes,
  WindowSource,
} from "./observe/linux-checks.js";
export type { ScreenshotMark, ScreenshotOptions } from "./observe/marks.js";
export type { OcrMode } from "./observe/ocr/plan.js";
export {
  type CoordinateContract,
  createSnapshot,
  newSnapshotId,
  type Screenshot,
  type Snapshot,
  type SnapshotCut,
  type SnapshotInput,
  type SnapshotTimings,
} from "./observe/snapshot.js";
export {
  compareWindows,
  type WindowKind,
  type WindowListing,
  type WindowOption,
} from "./observe/windows.js";
export {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NODES,
  DEFAULT_TEXT_LIMIT,
  estimateTokens,
  type LineFacts,
  MIN_MAX_TOKENS,
  type RenderCut,
  type RenderOptions,
  type RenderResult,
  render,
  type Style,
  secureByName,
  type TextLimit,
  TOKEN_ESTIMATE_ERROR,
  type ViewOptions,
  type ViewSummary,
} from "./render/index.js";
export type {
  CaptureProof,
  ElementRecord,
  IdentityPredicate,
  NameSource,
  PathRoot,
  Synthetic,
} from "./render/records.js";
export {
  click,
  clickAt,
  doubleClickAt,
  drag,
  dragAt,
  find,
  performAction,
  pressKey,
  resolve,
  rightClickAt,
  scroll,
  scrollAt,
  session,
  setValue,
  snapshot,
  typeText,
  waitFor,
} from "./session/actions.js";
export {
  DEFAULT_FIND_LIMIT,
  FIND_REFUSED_VIEWS,
  type FindMatch,
  type FindOptions,
  type FindQuery,
  type FindResult,
  type FindTerms,
  findText,
} from "./session/find.js";
export {
  type LaunchableApp,
  type LaunchedApp,
  type LaunchOptions,
  launchApp,
  listLaunchable,
} from "./session/launch/launch.js";
export { parseLocator, printLocator } from "./session/locator/grammar.js";
export type { Locator, LocatorStep } from "./session/locator/types.js";
export {
  type ActionResult,
  type ActOptions,
  type ClickOptions,
  type ConfirmRequest,
  createSession,
  DEFAULT_DESTRUCTIVE_WORDS,
  type Expectation,
  type ExpectOptions,
  type ExpectResult,
  findAgain,
  type Located,
  type LocateOptions,
  type LocatorTarget,
  type PixelOptions,
  type ResolvedTarget,
  type SecretOption,
  Session,
  type SessionOptions,
  type SettleOptions,
  type Target,
  type WaitCondition,
  type WaitOptions,
  type WaitResult,
} from "./session/session.js";
export type { TraceControl } from "./session/trace/control.js";
export { exportSkill } from "./session/trace/export-skill.js";
export { type ExportTsOptions, exportTs } from "./session/trace/export-ts.js";
export { readTrace } from "./session/trace/read.js";
export {
  type DriftKind,
  type ReplayDrift,
  type ReplayOptions,
  type ReplayReport,
  type ReplayStepResult,
  replayText,
  replayTrace,
} from "./session/trace/replay.js";
export { showTrace } from "./session/trace/show.js";
export type {
  ReadTrace,
  TraceChange,
  TraceDoor,
  TraceError,
  TraceHeader,
  TraceLine,
  TraceOptions,
  TraceResult,
  TraceSnapshotLine,
  TraceStatus,
  TraceStepLine,
  TraceSurface,
  TraceTarget,
  TraceWindow,
} from "./session/trace/types.js";
export { renderTraceHtml, type ViewOptions as TraceViewOptions } from "./session/trace/view.js";
