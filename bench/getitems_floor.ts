// The floor for a snapshot on Linux: one org.a11y.atspi.Cache.GetItems call,
// which returns name, role, description, states, interfaces and parent of
// every object the app's AT-SPI bridge has cached, in one message.
//
//   tsx bench/getitems_floor.ts [APP_NAME] [RUNS]      (default gtk3-widget-factory, 20)
//
// Needs the desktop's environment (DBUS_SESSION_BUS_ADDRESS, or AT_SPI_BUS);
// e.g. node scripts/desktop.mjs run --gtk-widget-factory -- npx tsx bench/getitems_floor.ts
//
// Prints one JSON line: {"app", "bus", "items", "bytes", "ms": [...], "median"}.
// Each time runs from writing the call to having the whole reply in memory
// (decoding excluded), over the accessibility bus, in this process: a tiny
// D-Bus client over node:net, so no process start-up is measured.
//
// Note: atk-bridge exports /org/a11y/atspi/cache only once some client has
// registered an event listener with the registry; if GetItems is unknown,
// this registers one ("window:") on its own connection and retries.

import net from "node:net";
import os from "node:os";
import { fileURLToPath } from "node:url";

// ---------------------------------------------------------------------------
// marshalling (little-endian, the subset these calls need)

type Value = string | number | bigint | boolean | Value[] | Map<Value, Value> | { sig: string; value: Value };

class Writer {
  private bytes: number[] = [];

  get length(): number {
    return this.bytes.length;
  }

  align(n: number): void {
    while (this.bytes.length % n !== 0) this.bytes.push(0);
  }

  byte(v: number): void {
    this.bytes.push(v & 0xff);
  }

  uint32(v: number): void {
    this.align(4);
    this.bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }

  setUint32(at: number, v: number): void {
    this.bytes[at] = v & 0xff;
    this.bytes[at + 1] = (v >>> 8) & 0xff;
    this.bytes[at + 2] = (v >>> 16) & 0xff;
    this.bytes[at + 3] = (v >>> 24) & 0xff;
  }

  string(s: string): void {
    const data = Buffer.from(s, "utf8");
    this.uint32(data.length);
    for (const b of data) this.bytes.push(b);
    this.bytes.push(0);
  }

  signature(s: string): void {
    this.byte(s.length);
    for (const b of Buffer.from(s, "ascii")) this.bytes.push(b);
    this.bytes.push(0);
  }

  /** Marshals one argument of a simple type: s, o, g, u, i, b, as. */
  arg(sig: string, value: unknown): void {
    switch (sig) {
      case "s":
      case "o":
        this.string(String(value));
        return;
      case "g":
        this.signature(String(value));
        return;
      case "u":
      case "i":
        this.uint32(Number(value));
        return;
      case "b":
        this.uint32(value ? 1 : 0);
        return;
      case "as": {
        this.align(4);
        const at = this.length;
        this.uint32(0);
        const start = this.length;
        for (const s of value as string[]) this.string(s);
        this.setUint32(at, this.length - start);
        return;
      }
      default:
        throw new Error(`getitems_floor: cannot marshal ${sig}`);
    }
  }

  buffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** Splits a signature into its complete types. */
function splitSignature(sig: string): string[] {
  const types: string[] = [];
  let i = 0;
  while (i < sig.length) {
    const end = completeTypeEnd(sig, i);
    types.push(sig.slice(i, end));
    i = end;
  }
  return types;
}

function completeTypeEnd(sig: string, i: number): number {
  const c = sig[i];
  if (c === "a") return completeTypeEnd(sig, i + 1);
  if (c === "(" || c === "{") {
    const close = c === "(" ? ")" : "}";
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) throw new Error(`getitems_floor: bad signature ${sig}`);
      j = completeTypeEnd(sig, j);
    }
    return j + 1;
  }
  return i + 1;
}

const ALIGN: Record<string, number> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  s: 4,
  o: 4,
  g: 1,
  a: 4,
  "(": 8,
  "{": 8,
  v: 1,
  h: 4,
};

class Reader {
  constructor(
    private readonly buf: Buffer,
    public pos: number,
    private readonly base: number,
  ) {}

  private align(n: number): void {
    const rel = this.pos - this.base;
    this.pos += (n - (rel % n)) % n;
  }

  read(type: string): Value {
    const c = type[0] ?? "";
    this.align(ALIGN[c] ?? 1);
    switch (c) {
      case "y":
        return this.buf.readUInt8(this.pos++);
      case "b":
        this.pos += 4;
        return this.buf.readUInt32LE(this.pos - 4) !== 0;
      case "n":
        this.pos += 2;
        return this.buf.readInt16LE(this.pos - 2);
      case "q":
        this.pos += 2;
        return this.buf.readUInt16LE(this.pos - 2);
      case "i":
        this.pos += 4;
        return this.buf.readInt32LE(this.pos - 4);
      case "u":
      case "h":
        this.pos += 4;
        return this.buf.readUInt32LE(this.pos - 4);
      case "x":
        this.pos += 8;
        return this.buf.readBigInt64LE(this.pos - 8);
      case "t":
        this.pos += 8;
        return this.buf.readBigUInt64LE(this.pos - 8);
      case "d":
        this.pos += 8;
        return this.buf.readDoubleLE(this.pos - 8);
      case "s":
      case "o": {
        const len = this.buf.readUInt32LE(this.pos);
        const s = this.buf.toString("utf8", this.pos + 4, this.pos + 4 + len);
        this.pos += 4 + len + 1;
        return s;
      }
      case "g": {
        const len = this.buf.readUInt8(this.pos);
        const s = this.buf.toString("ascii", this.pos + 1, this.pos + 1 + len);
        this.pos += 1 + len + 1;
        return s;
      }
      case "v": {
        const sig = this.read("g") as string;
        return { sig, value: this.read(sig) };
      }
      case "a": {
        const len = this.buf.readUInt32LE(this.pos);
        this.pos += 4;
        const elem = type.slice(1);
        this.align(ALIGN[elem[0] ?? ""] ?? 1);
        const end = this.pos + len;
        if (elem[0] === "{") {
          const [k, v] = splitSignature(elem.slice(1, -1));
          const map = new Map<Value, Value>();
          while (this.pos < end) {
            this.align(8);
            map.set(this.read(k ?? ""), this.read(v ?? ""));
          }
          return map;
        }
        const items: Value[] = [];
        while (this.pos < end) items.push(this.read(elem));
        return items;
      }
      case "(":
        return splitSignature(type.slice(1, -1)).map((t) => this.read(t));
      default:
        throw new Error(`getitems_floor: cannot decode type ${type}`);
    }
  }

  readAll(sig: string): Value[] {
    return splitSignature(sig).map((t) => this.read(t));
  }
}

// ---------------------------------------------------------------------------
// a minimal D-Bus connection

interface Message {
  type: number;
  serial: number;
  replySerial: number;
  errorName: string;
  signature: string;
  body: Buffer;
  bytes: number;
  receivedAt: bigint;
}

interface Call {
  destination: string;
  path: string;
  iface: string;
  member: string;
  signature?: string;
  args?: unknown[];
}

const METHOD_CALL = 1;
const ERROR = 3;

function socketPath(address: string): string {
  for (const entry of address.split(";")) {
    const [transport, params = ""] = entry.split(/:(.*)/s) as [string, string?];
    if (transport !== "unix") continue;
    const kv = new Map(
      params.split(",").map((p) => {
        const eq = p.indexOf("=");
        return [p.slice(0, eq), decodeURIComponent(p.slice(eq + 1))] as const;
      }),
    );
    const path = kv.get("path");
    if (path) return path;
    const abstract = kv.get("abstract");
    if (abstract) return `\0${abstract}`;
  }
  throw new Error(`getitems_floor: no unix socket in D-Bus address ${address}`);
}

export class DBusConnection {
  private socket: net.Socket;
  // Received bytes not yet dispatched: chunks, joined only once a whole message is in (a reply of
  // tens of MB arrives in thousands of chunks; joining on each would copy it thousands of times).
  private chunks: Buffer[] = [];
  private buffered = 0;
  private serial = 0;
  private pending = new Map<number, (m: Message) => void>();
  private authWaiter: ((line: string) => void) | null = null;
  private authenticated = false;
  private failure: Error | null = null;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    const fail = (error: Error) => {
      this.failure = error;
      for (const resolve of this.pending.values()) {
        resolve({
          type: ERROR,
          serial: 0,
          replySerial: 0,
          errorName: "axsnap.ConnectionLost",
          signature: "s",
          body: Buffer.alloc(0),
          bytes: 0,
          receivedAt: process.hrtime.bigint(),
        });
      }
      this.pending.clear();
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("connection closed")));
  }

  static async open(address: string): Promise<DBusConnection> {
    const socket = net.createConnection({ path: socketPath(address) });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const conn = new DBusConnection(socket);
    const uid = Buffer.from(String(os.userInfo().uid), "ascii").toString("hex");
    socket.write(Buffer.concat([Buffer.from([0]), Buffer.from(`AUTH EXTERNAL ${uid}\r\n`, "ascii")]));
    const reply = await conn.authLine();
    if (!reply.startsWith("OK ")) throw new Error(`getitems_floor: D-Bus authentication failed: ${reply}`);
    socket.write("BEGIN\r\n");
    conn.authenticated = true;
    await conn.call({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      iface: "org.freedesktop.DBus",
      member: "Hello",
    });
    return conn;
  }

  private authLine(): Promise<string> {
    return new Promise((resolve) => {
      this.authWaiter = resolve;
      this.onData(Buffer.alloc(0));
    });
  }

  /** The buffered bytes as one Buffer (joined once, then kept as the only chunk). */
  private joined(): Buffer {
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private consume(n: number): void {
    const rest = this.joined().subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
  }

  private onData(chunk: Buffer): void {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    if (!this.authenticated) {
      const input = this.joined();
      const eol = input.indexOf("\r\n");
      if (eol >= 0 && this.authWaiter) {
        const line = input.toString("ascii", 0, eol);
        this.consume(eol + 2);
        const waiter = this.authWaiter;
        this.authWaiter = null;
        waiter(line);
      }
      return;
    }
    while (this.buffered >= 16) {
      const first = this.chunks[0] ?? Buffer.alloc(0);
      const head = first.length >= 16 ? first : this.joined();
      const fieldsLength = head.readUInt32LE(12);
      const headerEnd = 16 + fieldsLength + ((8 - ((16 + fieldsLength) % 8)) % 8);
      const total = headerEnd + head.readUInt32LE(4);
      if (this.buffered < total) return;
      const receivedAt = process.hrtime.bigint();
      const raw = this.joined().subarray(0, total);
      this.consume(total);
      this.dispatch(raw, headerEnd, receivedAt);
    }
  }

  private dispatch(raw: Buffer, headerEnd: number, receivedAt: bigint): void {
    if (raw[0] !== 0x6c) throw new Error("getitems_floor: big-endian messages are not supported");
    const fields = new Reader(raw, 12, 0).read("a(yv)") as Value[][];
    const message: Message = {
      type: raw.readUInt8(1),
      serial: raw.readUInt32LE(8),
      replySerial: 0,
      errorName: "",
      signature: "",
      body: raw.subarray(headerEnd),
      bytes: raw.length,
      receivedAt,
    };
    for (const [code, variant] of fields) {
      const value = (variant as { value: Value }).value;
      if (code === 5) message.replySerial = value as number;
      else if (code === 4) message.errorName = value as string;
      else if (code === 8) message.signature = value as string;
    }
    const resolve = this.pending.get(message.replySerial);
    if (resolve) {
      this.pending.delete(message.replySerial);
      resolve(message);
    }
  }

  /** Sends a method call; resolves with the reply and the round-trip time in ms. */
  async call(call: Call, timeoutMs = 5000): Promise<{ values: () => Value[]; message: Message; ms: number }> {
    if (this.failure) throw this.failure;
    const body = new Writer();
    const sig = call.signature ?? "";
    splitSignature(sig).forEach((t, i) => {
      body.arg(t, call.args?.[i]);
    });
    const bodyBytes = body.buffer();

    const header = new Writer();
    const serial = ++this.serial;
    header.byte(0x6c);
    header.byte(METHOD_CALL);
    header.byte(0);
    header.byte(1);
    header.uint32(bodyBytes.length);
    header.uint32(serial);
    const lengthAt = header.length;
    header.uint32(0);
    header.align(8);
    const fieldsStart = header.length;
    const field = (code: number, type: string, value: string) => {
      header.align(8);
      header.byte(code);
      header.signature(type);
      header.arg(type, value);
    };
    field(1, "o", call.path);
    field(2, "s", call.iface);
    field(3, "s", call.member);
    field(6, "s", call.destination);
    if (sig) field(8, "g", sig);
    header.setUint32(lengthAt, header.length - fieldsStart);
    header.align(8);

    const reply = new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(serial);
        reject(
          new Error(`getitems_floor: ${call.member} on ${call.destination}: no reply in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.pending.set(serial, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
    const start = process.hrtime.bigint();
    this.socket.write(Buffer.concat([header.buffer(), bodyBytes]));
    const message = await reply;
    const ms = Number(message.receivedAt - start) / 1e6;
    const values = () => new Reader(message.body, 0, 0).readAll(message.signature);
    if (message.type === ERROR) {
      const text = message.signature.startsWith("s") ? String(values()[0]) : "";
      const error = new Error(`${message.errorName}: ${text}`) as Error & { dbusName: string };
      error.dbusName = message.errorName;
      throw error;
    }
    return { values, message, ms };
  }

  close(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------
// the measurement

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function a11yBusAddress(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.AT_SPI_BUS) return env.AT_SPI_BUS;
  const session = env.DBUS_SESSION_BUS_ADDRESS;
  if (!session)
    throw new Error("getitems_floor: no DBUS_SESSION_BUS_ADDRESS (run under scripts/desktop.mjs)");
  const conn = await DBusConnection.open(session);
  try {
    const r = await conn.call({
      destination: "org.a11y.Bus",
      path: "/org/a11y/bus",
      iface: "org.a11y.Bus",
      member: "GetAddress",
    });
    return String(r.values()[0]);
  } finally {
    conn.close();
  }
}

/** The bus name of the registered app called `appName`. */
export async function findAppBus(conn: DBusConnection, appName: string): Promise<string> {
  const r = await conn.call({
    destination: "org.a11y.atspi.Registry",
    path: "/org/a11y/atspi/accessible/root",
    iface: "org.a11y.atspi.Accessible",
    member: "GetChildren",
  });
  const refs = (r.values()[0] as [string, string][]) ?? [];
  for (const [bus, path] of refs) {
    try {
      const name = await conn.call({
        destination: bus,
        path,
        iface: "org.freedesktop.DBus.Properties",
        member: "Get",
        signature: "ss",
        args: ["org.a11y.atspi.Accessible", "Name"],
      });
      if ((name.values()[0] as { value: Value }).value === appName) return bus;
    } catch {
      // an app that went away or does not answer
    }
  }
  throw new Error(`getitems_floor: no app named "${appName}" in the registry`);
}

const GET_ITEMS: Omit<Call, "destination"> = {
  path: "/org/a11y/atspi/cache",
  iface: "org.a11y.atspi.Cache",
  member: "GetItems",
};

export interface GetItemsResult {
  app: string;
  bus: string;
  /** Objects in one reply. */
  items: number;
  /** Size of one reply message. */
  bytes: number;
  ms: number[];
  median: number;
  /** Time this script took to decode one reply into JavaScript values (not part of `ms`). */
  decodeMs: number;
  /**
   * Objects in the largest "document web" subtree (the web page, the node included), counted from the
   * reply's parent references; absent when the app has no web document.
   */
  documentItems?: number;
  /** That document's own child count as the reply states it (its children may still be missing from the reply). */
  documentChildCount?: number;
}

/** AT-SPI's ROLE_DOCUMENT_WEB. */
const ROLE_DOCUMENT_WEB = 95;

/**
 * From a decoded GetItems reply (a((so)(so)(so)iiassusau): object, app, parent, index in parent, child
 * count, interfaces, name, role, description, states), the size of the largest document web subtree.
 */
function largestDocument(items: Value[]): { items: number; childCount: number } | undefined {
  const key = (ref: Value) => {
    const [bus, path] = ref as [string, string];
    return `${bus}${path}`;
  };
  const parent = new Map<string, string>();
  const documents: string[] = [];
  const childCount = new Map<string, number>();
  for (const item of items) {
    const fields = item as Value[];
    const self = key(fields[0] ?? ["", ""]);
    parent.set(self, key(fields[2] ?? ["", ""]));
    if (fields[7] === ROLE_DOCUMENT_WEB) {
      documents.push(self);
      childCount.set(self, Number(fields[4] ?? 0));
    }
  }
  if (documents.length === 0) return undefined;
  const size = new Map<string, number>(documents.map((d) => [d, 0]));
  for (const start of parent.keys()) {
    // Each object counts once for the nearest document above it (or itself); bounded against cycles.
    let at: string | undefined = start;
    for (let hops = 0; at !== undefined && hops < 4096; hops++) {
      const n = size.get(at);
      if (n !== undefined) {
        size.set(at, n + 1);
        break;
      }
      at = parent.get(at);
    }
  }
  let best: { items: number; childCount: number } | undefined;
  for (const [d, n] of size)
    if (!best || n > best.items) best = { items: n, childCount: childCount.get(d) ?? 0 };
  return best;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * Times `runs` GetItems calls on the app (after one unmeasured call). A big app's reply (a web page
 * of 50,000 elements: tens of MB) can take seconds: each call may take up to `timeoutMs` (default 60 s).
 */
export async function measureGetItems(
  appName: string,
  runs: number,
  env: NodeJS.ProcessEnv = process.env,
  { timeoutMs = 60_000 }: { timeoutMs?: number } = {},
): Promise<GetItemsResult> {
  const conn = await DBusConnection.open(await a11yBusAddress(env));
  try {
    const bus = await findAppBus(conn, appName);
    const call = { destination: bus, ...GET_ITEMS };
    let first: Awaited<ReturnType<DBusConnection["call"]>> | null = null;
    try {
      first = await conn.call(call, timeoutMs);
    } catch (error) {
      if ((error as { dbusName?: string }).dbusName !== "org.freedesktop.DBus.Error.UnknownMethod")
        throw error;
      // The bridge exports its cache once an event listener is registered.
      await conn.call({
        destination: "org.a11y.atspi.Registry",
        path: "/org/a11y/atspi/registry",
        iface: "org.a11y.atspi.Registry",
        member: "RegisterEvent",
        signature: "sass",
        args: ["window:", [], ""],
      });
      const deadline = Date.now() + 3000;
      while (!first) {
        try {
          first = await conn.call(call, timeoutMs);
        } catch (retryError) {
          if (Date.now() > deadline) throw retryError;
          await sleep(50);
        }
      }
    }
    const t0 = performance.now();
    const decoded = first.values()[0] as Value[];
    const decodeMs = Math.round((performance.now() - t0) * 1000) / 1000;
    const items = decoded.length;
    const documentItems = largestDocument(decoded);
    const ms: number[] = [];
    let bytes = first.message.bytes;
    for (let i = 0; i < runs; i++) {
      const r = await conn.call(call, timeoutMs);
      ms.push(Math.round(r.ms * 1000) / 1000);
      bytes = r.message.bytes;
    }
    return {
      app: appName,
      bus,
      items,
      bytes,
      ms,
      median: Math.round(median(ms) * 1000) / 1000,
      decodeMs,
      ...(documentItems !== undefined
        ? { documentItems: documentItems.items, documentChildCount: documentItems.childCount }
        : {}),
    };
  } finally {
    conn.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const appName = process.argv[2] ?? "gtk3-widget-factory";
  const runs = Number(process.argv[3] ?? 20);
  measureGetItems(appName, runs).then(
    (result) => console.log(JSON.stringify(result)),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
