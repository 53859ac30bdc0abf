/**
 * Secrets in a trace (docs/trace.md "Secrets"). A secret typed through
 * axsnap goes into a field that is not secure (secure fields are refused and
 * never read), so later snapshots print it: every string the recorder writes
 * has each secret it was given replaced by «secret».
 */

export const SECRET_MARK = "«secret»";

export class Scrubber {
  /** Longest first: a secret that contains another is replaced whole. */
  private secrets: string[] = [];

  add(secret: string): void {
    if (secret === "" || this.secrets.includes(secret)) return;
    this.secrets.push(secret);
    this.secrets.sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.secrets.length > 0;
  }

  /** The text with every secret replaced. */
  text(s: string): string {
    let out = s;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(SECRET_MARK);
    return out;
  }

  /** Whether the text shows a secret. */
  shows(s: string): boolean {
    return this.secrets.some((secret) => s.includes(secret));
  }

  /** A JSON-shaped value with every string scrubbed (a copy where anything changed). */
  deep<T>(value: T): T {
    if (!this.active) return value;
    return this.walk(value) as T;
  }

  private walk(v: unknown): unknown {
    if (typeof v === "string") return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.walk(x));
    if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.walk(x);
      return out;
    }
    return v;
  }
}
