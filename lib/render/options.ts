/**
 * The render options and their defaults, checked. Apart from the renderer
 * because the native request of an observation is made from them
 * (lib/observe/observe-request.ts) before the renderer is loaded: the CLI starts its
 * walk while the rest of the library is still loading.
 */
import { invalidArgument } from "../model/errors.js";
import type { Style } from "./format.js";
import type { TextLimit } from "./sanitize.js";

export interface RenderOptions {
  /** "tree" (default): the computer-use format; "compact": denser, same indices. */
  style?: Style;
  /** Longest printed text field, in characters; "max" for no cut. Default 500. */
  textLimit?: TextLimit;
  /** Most elements printed. Default 1200. */
  maxNodes?: number;
  /** Deepest printed level (elided containers add none). Default 64. */
  maxDepth?: number;
  /**
   * Treat a text-entry field whose name, description or placeholder says
   * password, passcode, PIN or 密码, or whose inferred label does, as secure:
   * its value and selected text never print. Default true; false leaves only
   * the platform's secure flag.
   */
  secureNames?: boolean;
}

export const DEFAULT_TEXT_LIMIT = 500;
export const DEFAULT_MAX_NODES = 1200;
export const DEFAULT_MAX_DEPTH = 64;

function positiveInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw invalidArgument(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

export function normaliseRenderOptions(options: RenderOptions = {}): Required<RenderOptions> {
  if (options === null || typeof options !== "object")
    throw invalidArgument("render options must be an object");
  const style = options.style ?? "tree";
  if (style !== "tree" && style !== "compact")
    throw invalidArgument(`style must be "tree" or "compact", got ${String(style)}`);
  const textLimit = options.textLimit ?? DEFAULT_TEXT_LIMIT;
  if (textLimit !== "max" && (typeof textLimit !== "number" || !Number.isInteger(textLimit) || textLimit < 1))
    throw invalidArgument(`textLimit must be a positive integer or "max", got ${String(textLimit)}`);
  // Strict: a null here is a bug in the caller, not a request for the default of a safety option.
  const secureNames = options.secureNames === undefined ? true : options.secureNames;
  if (typeof secureNames !== "boolean")
    throw invalidArgument(`secureNames must be true or false, got ${String(secureNames)}`);
  return {
    style,
    textLimit,
    maxNodes: positiveInt("maxNodes", options.maxNodes, DEFAULT_MAX_NODES),
    maxDepth: positiveInt("maxDepth", options.maxDepth, DEFAULT_MAX_DEPTH),
    secureNames,
  };
}
