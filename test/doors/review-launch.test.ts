/**
 * launchApp and MCP launch_app refuse what they cannot do safely or as
 * asked (issue 19 review §5): paths and argv over MCP without
 * --allow-launch-paths, args a desktop entry cannot take, huge names,
 * NUL bytes and bad env keys.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import type { Step } from "../../lib/doors/cli/grammar.js";
import { launchCommand } from "../../lib/doors/cli/launch.js";
import { parseMcpArgs } from "../../lib/doors/mcp/options.js";
import { createMcpServer } from "../../lib/mcp.js";
import { AxsnapError } from "../../lib/model/errors.js";
import { loadNative } from "../../lib/native.js";
import { launchApp } from "../../lib/session/launch/launch.js";
import { editDistance, matchLaunchable } from "../../lib/session/launch/match.js";
import { createSession } from "../../lib/session/session.js";
import type { Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { rejects } from "../support/rejects.js";

const native = loadNative();
const fakeDesktop = { apps: [] };

const entries = Array.from({ length: 3 }, (_, i) => ({
  id: `org.example.App${i}.desktop`,
  name: `Example ${i}`,
  executable: `/usr/bin/example-${i}`,
  path: `/usr/share/applications/org.example.App${i}.desktop`,
  hidden: false,
}));

function refusedBy(fn: () => unknown): AxsnapError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AxsnapError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("launch: names and arguments checked before anything is asked or started", () => {
  it("matchLaunchable refuses a huge name as INVALID_ARGUMENT", () => {
    expect(refusedBy(() => matchLaunchable("x".repeat(20_000), entries)).code).toBe("INVALID_ARGUMENT");
  });

  it("a long near miss (256 characters) still answers fast with APP_NOT_FOUND", () => {
    const many = Array.from({ length: 300 }, (_, i) => ({
      ...entries[0]!,
      id: `org.example.${"y".repeat(200)}${i}.desktop`,
      name: "z".repeat(250),
    }));
    const e = refusedBy(() => matchLaunchable("q".repeat(256), many));
    expect(e.code).toBe("APP_NOT_FOUND");
  });

  it("editDistance with a bound is exact within it and gives up past it", () => {
    expect(editDistance("kitten", "sitting", 3)).toBe(3);
    expect(editDistance("kitten", "sitting", 2)).toBe(3);
    expect(editDistance("factroy", "factory", 5)).toBe(2);
    expect(editDistance("a".repeat(200), "b".repeat(200), 10)).toBe(11);
    expect(editDistance("abc", "abcdefgh", 2)).toBe(3);
  });

  it("a near miss still names the closest entries", () => {
    const e = refusedBy(() => matchLaunchable("exmaple 1", entries));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.hint).toContain("org.example.App1.desktop");
  });

  it("launchApp refuses a huge name before it asks the backend anything", async () => {
    const b = new native.NativeBackend("fake", fakeDesktop);
    try {
      const e = await rejects(launchApp("x".repeat(100_000), { deadlineMs: 2000 }, b));
      expect(e.code).toBe("INVALID_ARGUMENT");
    } finally {
      await b.close();
    }
  });

  const bad: [string, Parameters<typeof launchApp>[1]][] = [
    ["a NUL in an argument", { args: ["a\0b"] }],
    ["a NUL in an env value", { env: { FOO: "a\0b" } }],
    ["a NUL in an env key", { env: { "FO\0O": "x" } }],
    ["an env key with =", { env: { "A=B": "x" } }],
    ["an empty env key", { env: { "": "x" } }],
    ["too many arguments", { args: Array.from({ length: 5000 }, () => "a") }],
    ["a huge argument", { args: ["a".repeat(200_000)] }],
  ];
  for (const [what, options] of bad)
    it(`refuses ${what} as INVALID_ARGUMENT, not_delivered, on the spawn path`, async () => {
      const e = await rejects(launchApp("/bin/true", { deadlineMs: 2000, ...options }));
      expect({ code: e.code, delivery: e.delivery }).toEqual({
        code: "INVALID_ARGUMENT",
        delivery: "not_delivered",
      });
    });

  it("--allow-launch-paths is a server option, off by default", () => {
    expect(parseMcpArgs([]).allowLaunchPaths).toBe(false);
    expect(parseMcpArgs(["--allow-launch-paths"]).allowLaunchPaths).toBe(true);
    expect(() => parseMcpArgs(["--allow-launch-paths=yes"])).toThrow(AxsnapError);
  });
});

describe("launch on a real desktop", () => {
  let d: Desktop | undefined;
  const dir = mkdtempSync(join(tmpdir(), "axsnap-review-launch-"));
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A desktop entry whose program appends one line per start to `log`, then sleeps. */
  function entry(name: string, code: string): { file: string; log: string } {
    const log = join(dir, `${name}.log`);
    const file = join(dir, `${name}.desktop`);
    writeFileSync(
      file,
      `[Desktop Entry]\nType=Application\nName=${name}\nExec=sh -c 'echo "$*" >> ${log}; sleep 5' sh ${code}\n`,
    );
    return { file, log };
  }
  const starts = (log: string) => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);

  it("args to an entry whose Exec takes no files are refused, and nothing starts", async () => {
    d = await useDesktop();
    const { file, log } = entry("nofiles", "");
    const e = await rejects(launchApp(file, { args: ["one", "two", "three"], deadlineMs: 2500 }));
    expect({ code: e.code, delivery: e.delivery }).toEqual({
      code: "INVALID_ARGUMENT",
      delivery: "not_delivered",
    });
    expect(e.hint).toMatch(/by path|without args/);
    await new Promise((r) => setTimeout(r, 500));
    expect(starts(log)).toEqual([]);
  }, 60_000);

  it("gtk3-widget-factory (Exec without a field code) refuses args", async () => {
    d ??= await useDesktop();
    const e = await rejects(launchApp("gtk3-widget-factory", { args: ["--help"], deadlineMs: 5000 }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain("gtk3-widget-factory");
  }, 60_000);

  it("axsnap launch with args for such an entry answers with a hint naming CLI commands", async () => {
    d ??= await useDesktop();
    const e = await rejects(
      launchCommand({ program: "gtk3-widget-factory", launchArgs: ["--help"] } as Step),
    );
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.hint).toContain("axsnap launch /path/to/program -- ARGS");
    expect(e.hint).not.toMatch(/launchApp\(/);
  }, 60_000);

  it("an entry with %f takes one file; two are refused", async () => {
    d ??= await useDesktop();
    const { file, log } = entry("onefile", "%f");
    const e = await rejects(launchApp(file, { args: ["a.txt", "b.txt"], deadlineMs: 2500 }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    const t = await rejects(launchApp(file, { args: ["a.txt"], deadlineMs: 1500 }));
    expect(t.code).toBe("TIMEOUT");
    expect(starts(log)).toEqual([join(process.cwd(), "a.txt")]);
    process.kill(t.pid!, "SIGKILL");
  }, 60_000);

  it("an entry with %F starts once with all the files", async () => {
    d ??= await useDesktop();
    const { file, log } = entry("manyfiles", "%F");
    const t = await rejects(launchApp(file, { args: ["a.txt", "/tmp/b.txt"], deadlineMs: 1500 }));
    expect(t.code).toBe("TIMEOUT");
    expect(starts(log)).toEqual([`${join(process.cwd(), "a.txt")} /tmp/b.txt`]);
    process.kill(t.pid!, "SIGKILL");
  }, 60_000);

  it("an option-like arg to an entry is refused, not turned into a file:///cwd/--flag", async () => {
    d ??= await useDesktop();
    const { file, log } = entry("flag", "%U");
    const e = await rejects(launchApp(file, { args: ["--flag"], deadlineMs: 2500 }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(starts(log)).toEqual([]);
  }, 60_000);

  async function mcp(settings: Parameters<typeof createMcpServer>[1] = {}) {
    const session = createSession();
    const server = createMcpServer(session, settings);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "review-launch", version: "0.0.0" });
    await Promise.all([server.connect(b), client.connect(a)]);
    return {
      client,
      close: async () => {
        await client.close();
        await session.close();
      },
    };
  }

  it("MCP launch_app does not run a program by path on a server started without options", async () => {
    d ??= await useDesktop();
    const marker = join(dir, "shell-ran");
    const { client, close } = await mcp();
    try {
      const tools = await client.listTools();
      const launch = tools.tools.find((t) => t.name === "launch_app")!;
      const r = (await client.callTool({
        name: "launch_app",
        arguments: { app: "/bin/sh", args: ["-c", `echo ran > ${marker}`] },
      })) as CallToolResult;
      await new Promise((res) => setTimeout(res, 500));
      expect({
        ran: existsSync(marker),
        destructiveHint: launch.annotations?.destructiveHint,
        isError: r.isError,
      }).toEqual({ ran: false, destructiveHint: true, isError: true });
      const text = r.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
      expect(text).toContain("--allow-launch-paths");
      expect(text).toContain("list_apps");
    } finally {
      await close();
    }
  }, 60_000);

  it("MCP launch_app runs a program by path when the server allows launch paths", async () => {
    d ??= await useDesktop();
    const marker = join(dir, "shell-ran-allowed");
    const { client, close } = await mcp({ allowLaunchPaths: true });
    try {
      await client.callTool({
        name: "launch_app",
        arguments: { app: "/bin/sh", args: ["-c", `echo ran > ${marker}`] },
      });
      expect(existsSync(marker)).toBe(true);
    } finally {
      await close();
    }
  }, 60_000);

  for (const entry of [["lib/cli.ts", "mcp"], ["lib/mcp-main.ts"]])
    it(`${entry.join(" ")} --allow-launch-paths reaches launch_app`, async () => {
      d ??= await useDesktop();
      const marker = join(dir, `ran-${entry.length}`);
      const client = new Client({ name: "review-launch", version: "0.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", ...entry, "--allow-launch-paths"],
          env: { ...(process.env as Record<string, string>), ...d.env },
          stderr: "pipe",
        }),
      );
      try {
        await client.callTool({
          name: "launch_app",
          arguments: { app: "/bin/sh", args: ["-c", `echo ran > ${marker}`] },
        });
        expect(existsSync(marker)).toBe(true);
      } finally {
        await client.close();
      }
    }, 60_000);

  it("MCP launch_app refuses a name over 256 characters in its schema", async () => {
    d ??= await useDesktop();
    const { client, close } = await mcp();
    try {
      const r = (await client.callTool({
        name: "launch_app",
        arguments: { app: "x".repeat(300) },
      })) as CallToolResult;
      expect(r.isError).toBe(true);
      // The schema's own refusal, before any matching (a launchApp refusal would say "no launchable app").
      expect(r.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n")).toMatch(/256/);
    } finally {
      await close();
    }
  }, 60_000);
});
