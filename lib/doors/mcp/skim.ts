/**
 * What a line too long to keep says about itself: its top-level "id" and
 * "method", read as its bytes stream past, so the refusal can carry the id
 * and the line itself is never held. A JSON object tokenizer that only
 * tracks strings and nesting; the bodies of strings nobody asked for are
 * skipped without a look.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Longer ids, methods or keys are not worth keeping: they are not the ones we look for, or unusable. */
const KEEP_BYTES = 256;

export type SkimmedKind = "request" | "notification" | "response" | "unknown";

export interface Skimmed {
  /** "unknown": not one JSON object, or neither a method nor an id at its top level. */
  kind: SkimmedKind;
  /** The request's id when it could be read (a string or an integer), else null. */
  id: string | number | null;
  method: string | undefined;
}

type Field = "id" | "method";
/** A field's raw JSON value, or "unusable" (an object, an array, too long). */
type Raw = { quoted: boolean; text: string } | "unusable";

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

export class LineSkim {
  private depth = 0;
  private started = false;
  private closed = false;
  private broken = false;
  private inString = false;
  private escaped = false;
  /** At depth 1: the next string is a key (after "{" or ","), not a value. */
  private expectKey = false;
  private lastKey: string | undefined;
  /** At depth 1, after "id": or "method": the value about to come is kept. */
  private pending: Field | undefined;
  /** What the bytes being kept are: a key, a field's string, or a field's bare value (a number). */
  private keeping: { what: "key" | Field; quoted: boolean; bytes: number[]; over: boolean } | undefined;
  private readonly fields: Partial<Record<Field, Raw>> = {};
  /** In the chunk being read, the next quote and backslash found by the last search (the chunk's length: none). */
  private nextQuote = -1;
  private nextBackslash = -1;

  push(buf: Uint8Array): void {
    const n = buf.length;
    this.nextQuote = this.nextBackslash = -1;
    for (let i = 0; i < n && !this.broken; i++) {
      let c = buf[i]!;
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          this.keep(c);
          continue;
        }
        if (this.keeping === undefined || this.keeping.over) {
          i = this.stringEnd(buf, i);
          if (i === n) break;
          c = buf[i]!;
        }
        if (c === BACKSLASH) {
          this.escaped = true;
          this.keep(c);
        } else if (c === QUOTE) {
          this.inString = false;
          this.endKeeping();
        } else this.keep(c);
        continue;
      }
      if (isSpace(c)) {
        this.endBare();
        continue;
      }
      if (this.closed) {
        this.broken = true;
        break;
      }
      this.structural(c);
    }
  }

  /**
   * Where the string body at `from` stops (a quote or a backslash), or the
   * chunk's end: memchr-fast, and each position is searched for once per
   * chunk however many quotes and backslashes alternate.
   */
  private stringEnd(buf: Uint8Array, from: number): number {
    if (this.nextQuote < from) {
      const q = buf.indexOf(QUOTE, from);
      this.nextQuote = q === -1 ? buf.length : q;
    }
    if (this.nextBackslash < from) {
      const b = buf.indexOf(BACKSLASH, from);
      this.nextBackslash = b === -1 ? buf.length : b;
    }
    return Math.min(this.nextQuote, this.nextBackslash);
  }

  result(): Skimmed {
    this.endBare();
    if (this.broken || !this.closed) return { kind: "unknown", id: null, method: undefined };
    const id = this.fields.id;
    const method = this.fields.method;
    const methodText =
      method !== undefined && method !== "unusable" && method.quoted ? decode(method) : undefined;
    const kind: SkimmedKind =
      method !== undefined
        ? id !== undefined
          ? "request"
          : "notification"
        : id !== undefined
          ? "response"
          : "unknown";
    return { kind, id: id === undefined || id === "unusable" ? null : idOf(id), method: methodText };
  }

  private structural(c: number): void {
    if (this.depth === 0) {
      if (this.started || c !== OPEN_OBJECT) {
        this.broken = true;
        return;
      }
      this.started = true;
    }
    const top = this.depth === 1;
    switch (c) {
      case QUOTE:
        this.inString = true;
        if (top && this.expectKey) this.startKeeping("key", true);
        else if (top && this.pending) this.startKeeping(this.pending, true);
        return;
      case COLON:
        if (top) {
          this.expectKey = false;
          this.pending = this.lastKey === "id" || this.lastKey === "method" ? this.lastKey : undefined;
        }
        return;
      case COMMA:
        if (top) {
          this.endBare();
          this.expectKey = true;
          this.pending = undefined;
        }
        return;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (top && this.pending) {
          this.fields[this.pending] = "unusable";
          this.pending = undefined;
        }
        this.depth++;
        if (this.depth === 1) this.expectKey = true;
        return;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (top) this.endBare();
        this.depth--;
        if (this.depth === 0) this.closed = true;
        if (this.depth < 0) this.broken = true;
        return;
      default:
        // A bare value: a number, true, false or null.
        if (top && this.pending && this.keeping === undefined) this.startKeeping(this.pending, false);
        this.keep(c);
    }
  }

  private startKeeping(what: "key" | Field, quoted: boolean): void {
    this.keeping = { what, quoted, bytes: [], over: false };
  }

  private keep(c: number): void {
    const k = this.keeping;
    if (k === undefined || k.over) return;
    if (k.bytes.length === KEEP_BYTES) k.over = true;
    else k.bytes.push(c);
  }

  private endBare(): void {
    if (this.keeping !== undefined && !this.keeping.quoted) this.endKeeping();
  }

  private endKeeping(): void {
    const k = this.keeping;
    if (k === undefined) return;
    this.keeping = undefined;
    const text = Buffer.from(k.bytes).toString("utf8");
    if (k.what === "key") {
      this.lastKey = k.over ? undefined : decode({ quoted: true, text });
      return;
    }
    this.fields[k.what] = k.over ? "unusable" : { quoted: k.quoted, text };
    this.pending = undefined;
  }
}

function decode(raw: { quoted: boolean; text: string }): string | undefined {
  try {
    const v: unknown = JSON.parse(raw.quoted ? `"${raw.text}"` : raw.text);
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON-RPC id as MCP allows it: a string or an integer. */
function idOf(raw: { quoted: boolean; text: string }): string | number | null {
  if (raw.quoted) return decode(raw) ?? null;
  const v = Number(raw.text);
  return /^-?\d+$/.test(raw.text) && Number.isSafeInteger(v) ? v : null;
}
