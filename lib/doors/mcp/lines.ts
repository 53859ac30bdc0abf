/**
 * Newline-delimited framing of the MCP stdio stream, with a byte limit per
 * line. A line within the limit is handed on as text (its "\r\n" or "\n"
 * removed; blank lines dropped). A line that grows past the limit stops being
 * kept: the rest of it streams through a LineSkim until its newline, so
 * memory stays at the limit whatever a client sends, and the line is
 * reported with its size and what the skim read (its id, its method).
 */
import { LineSkim, type Skimmed } from "./skim.js";

const NEWLINE = 0x0a;
const CR = 0x0d;

export interface OversizedLine {
  /** The line's length in bytes, its line end not counted. */
  bytes: number;
  skimmed: Skimmed;
}

export interface LineSink {
  line(text: string): void;
  oversized(line: OversizedLine): void;
}

export class LineReader {
  private parts: Uint8Array[] = [];
  private size = 0;
  private skim: LineSkim | undefined;
  private lastByte = -1;

  constructor(
    private readonly limit: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Uint8Array): void {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      this.add(chunk.subarray(from, nl));
      from = nl + 1;
      this.endLine();
    }
    if (from < chunk.length) this.add(chunk.subarray(from));
  }

  private add(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.size += piece.length;
    this.lastByte = piece[piece.length - 1]!;
    if (this.skim) {
      this.skim.push(piece);
      return;
    }
    this.parts.push(piece);
    // One byte of slack for the "\r" of a "\r\n" line end.
    if (this.size > this.limit + 1) this.startSkim();
  }

  private startSkim(): void {
    this.skim = new LineSkim();
    for (const p of this.parts) this.skim.push(p);
    this.parts = [];
  }

  private endLine(): void {
    const bytes = this.size - (this.lastByte === CR ? 1 : 0);
    if (!this.skim && bytes > this.limit) this.startSkim();
    const skim = this.skim;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    this.skim = undefined;
    this.lastByte = -1;
    if (skim) {
      this.sink.oversized({ bytes, skimmed: skim.result() });
      return;
    }
    const text = Buffer.concat(parts, bytes).toString("utf8");
    if (text.trim() !== "") this.sink.line(text);
  }
}
