/**
 * Issue 10, items 3-5: axsnap as a consumer gets it. `npm pack` (its prepack
 * hook builds dist/ and, when stale, the N-API prebuild) → the tarball
 * installed offline from the local npm cache into a temporary project →
 * `tsc --noEmit` with skipLibCheck false under moduleResolution node16 and
 * bundler on a file that would not compile if the types were `any` →
 * `listApps()` through the installed package on a headless desktop →
 * `npx axsnap --help`. A second install runs with a PATH that holds only
 * node and npm (no pkg-config, compiler or make) and must use the prebuild.
 * The install times with and without a toolchain are printed.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../lib/model/errors.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { writeConsumerProject } from "../support/consumer.js";
import { useDesktop } from "../support/linux.js";

const root = join(import.meta.dirname, "..", "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const prebuildDir = `${process.platform}-${process.arch}`;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };

/** The environment of a user's shell: none of the variables npm sets for the script running this test. */
function consumerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      /^npm_(lifecycle|package)_|^npm_(execpath|node_execpath|command)$|^npm_config_local_prefix$/.test(key)
    )
      continue;
    if (key === "INIT_CWD" || key === "AXSNAP_NATIVE_PATH") continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, env = consumerEnv(), timeout = 240_000) {
  const started = performance.now();
  const result: SpawnSyncReturns<string> = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout });
  const ms = performance.now() - started;
  const shown = `${cmd} ${args.join(" ")} (in ${cwd})`;
  if (result.error) throw new Error(`${shown}: ${result.error.message}`);
  return { ...result, ms, shown, output: `${result.stdout}${result.stderr}` };
}

/** Runs and fails loudly, with everything the command printed, unless it exits 0. */
function ok(cmd: string, args: string[], cwd: string, env = consumerEnv(), timeout?: number) {
  const result = run(cmd, args, cwd, env, timeout);
  if (result.status !== 0)
    throw new Error(`${result.shown} exited ${result.status ?? result.signal}:\n${result.output}`);
  return result;
}

/** A consumer file that uses the API as documented; with `any` types its @ts-expect-error lines fail. */
function consumerSource(): string {
  const cases = ERROR_CODES.map((code) => `    case "${code}":`).join("\n");
  return `import {
  AxsnapError,
  click,
  createMcpHttpServer,
  type ErrorCode,
  type McpHttpServer,
  type Snapshot,
  snapshot,
  startDesktop,
} from "axsnap";

// The HTTP server's and the agent desktop's types, checked with no DOM lib (the SDK's types need one).
export async function serve(): Promise<string> {
  const desktop = await startDesktop({ name: "consumer" });
  const server: McpHttpServer = await createMcpHttpServer({ port: 0, replies: "full", desktop });
  const url: string = server.url;
  // @ts-expect-error replies is "diff" or "full"
  await createMcpHttpServer({ replies: "all" });
  await server.close();
  await desktop.stop();
  return \`\${url} \${server.status().sessions}\`;
}

export function advice(code: ErrorCode): string {
  switch (code) {
${cases}
      return code.toLowerCase();
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

export async function turn(): Promise<string> {
  const snap: Snapshot = await snapshot({ app: "gtk3-widget-factory", style: "compact", screenshot: false });
  const text: string = snap.text;
  const first = snap.records[0];
  try {
    const result = await click(\`@\${snap.id}:e0\`, { deadlineMs: 2000 });
    const delivery: "not_delivered" | "delivered_unverified" | "delivered_verified" | "delivery_uncertain" =
      result.delivery;
    // @ts-expect-error a target is an index, a ref or a record, not any object
    await click({});
    // @ts-expect-error a snapshot needs an app
    await snapshot({ style: "tree" });
    // @ts-expect-error the text is a string
    const wrong: number = snap.text;
    return \`\${text.length} \${first?.role ?? ""} \${delivery} \${wrong}\`;
  } catch (e) {
    if (e instanceof AxsnapError) return advice(e.code);
    throw e;
  } finally {
    await snap.release();
  }
}
`;
}

const compilerOptions = {
  strict: true,
  target: "ES2022",
  lib: ["ES2023"],
  types: ["node"],
  skipLibCheck: false,
  noEmit: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
};

let work: string;
let tarball: string;
let desktop: Desktop | undefined;
let gtk: App | undefined;
const times: string[] = [];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "axsnap-consumer-"));
  // prepack: dist/ (tsc) and the prebuild when it is missing or older than its sources.
  const pack = ok("npm", ["pack", "--pack-destination", work], root, process.env, 600_000);
  const made = readdirSync(work).filter((f) => f.endsWith(".tgz"));
  expect(made, pack.output).toHaveLength(1);
  tarball = join(work, made[0]!);
  times.push(`npm pack (prepack included): ${(pack.ms / 1000).toFixed(1)} s`);
}, 620_000);

afterAll(async () => {
  await gtk?.stop();
  await desktop?.stop();
  if (times.length > 0) console.log(`consumer test timings:\n  ${times.join("\n  ")}`);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Makes a consumer project in `work/<name>` and installs the tarball offline from the npm cache. */
function install(name: string, env: NodeJS.ProcessEnv) {
  const dir = join(work, name);
  mkdirSync(dir);
  const registry = ok("npm", ["config", "get", "registry"], dir).stdout.trim();
  writeConsumerProject(dir, root, tarball, `../${tarball.slice(work.length + 1)}`, registry);
  const result = ok(
    "npm",
    [
      "install",
      "--offline",
      "--no-audit",
      "--no-fund",
      "--foreground-scripts",
      `../${tarball.slice(work.length + 1)}`,
    ],
    dir,
    env,
  );
  return { dir, result, installed: join(dir, "node_modules", "axsnap") };
}

describe("the packed package", () => {
  it("holds dist/ with its types, the prebuild and the sources to build from, nothing else", () => {
    const list = ok("tar", ["-tzf", tarball], work).stdout.split("\n").filter(Boolean);
    for (const file of [
      "package/package.json",
      "package/dist/index.js",
      "package/dist/index.d.ts",
      "package/dist/session/actions.d.ts",
      "package/dist/session/session.d.ts",
      "package/dist/cli.js",
      `package/prebuilds/${prebuildDir}/axsnap.node`,
      `package/prebuilds/${prebuildDir}/axsnap_peer.so`,
      "package/binding.gyp",
      "package/src-native/napi/addon.cc",
      "package/README.md",
      // The pages the README links, so its links work in the installed package too.
      "package/docs/snapshot-format.md",
      "package/docs/acting.md",
    ])
      expect(list, file).toContain(file);
    expect(list.filter((f) => /^package\/(test|lib|bench|build|node_modules)\//.test(f))).toEqual([]);
  });
});

describe("a consumer project", () => {
  let project: { dir: string; installed: string };

  it("installs the tarball offline with the toolchain on PATH, from the prebuild", () => {
    const { dir, result, installed } = install("with-toolchain", consumerEnv());
    project = { dir, installed };
    times.push(`npm install, toolchain on PATH: ${(result.ms / 1000).toFixed(1)} s`);
    expect(existsSync(join(installed, "dist", "index.d.ts"))).toBe(true);
    // node-gyp-build found a prebuild that loads, so node-gyp never ran.
    expect(existsSync(join(installed, "build")), result.output).toBe(false);
    expect(result.output).not.toMatch(/gyp info|node-gyp rebuild/);
    // Types of Node for the consumer's compiler, as a consumer would have them.
    mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
    symlinkSync(join(root, "node_modules", "@types", "node"), join(dir, "node_modules", "@types", "node"));
    writeFileSync(join(dir, "consumer.ts"), consumerSource());
  });

  it.each([
    ["node16", { module: "node16", moduleResolution: "node16" }],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }],
  ])("type-checks with skipLibCheck false under moduleResolution %s", (name, resolution) => {
    const config = `tsconfig.${name}.json`;
    writeFileSync(
      join(project.dir, config),
      JSON.stringify(
        { compilerOptions: { ...compilerOptions, ...resolution }, files: ["consumer.ts"] },
        null,
        2,
      ),
    );
    const check = run(process.execPath, [tsc, "-p", config, "--listFiles"], project.dir);
    expect(check.status, check.output).toBe(0);
    // The types came from the installed package's .d.ts, not from lib/ or a path mapping.
    expect(check.stdout).toContain(join(project.installed, "dist", "index.d.ts"));
    expect(check.stdout).toContain(join(project.installed, "dist", "session", "actions.d.ts"));
    times.push(`tsc --noEmit (${name}): ${(check.ms / 1000).toFixed(1)} s, 0 errors`);
  });

  it("rejects the same file when a call is wrong (the check bites)", () => {
    writeFileSync(
      join(project.dir, "wrong.ts"),
      `import { click } from "axsnap";\nawait click({ index: "12" });\n`,
    );
    writeFileSync(
      join(project.dir, "tsconfig.wrong.json"),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, module: "node16", moduleResolution: "node16" },
        files: ["wrong.ts"],
      }),
    );
    const check = run(process.execPath, [tsc, "-p", "tsconfig.wrong.json"], project.dir);
    expect(check.status).not.toBe(0);
    expect(check.stdout).toMatch(/wrong\.ts\(2,\d+\): error TS\d+/);
  });

  it("imports the installed package and lists the apps of a headless desktop (import and require)", async () => {
    desktop = await useDesktop();
    gtk = await gtkWidgetFactory(desktop);
    const esm = ok(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { listApps } from "axsnap"; console.log(JSON.stringify(await listApps()));',
      ],
      project.dir,
      consumerEnv(desktop.env),
    );
    const apps = JSON.parse(esm.stdout) as Array<{ name: string; pid: number }>;
    expect(apps.map((a) => a.pid)).toContain(gtk.pid);
    // exports' "default" condition: require() loads the ES module (Node >= 20.19).
    const cjs = ok(
      process.execPath,
      ["-e", 'const a = require("axsnap"); a.listApps().then((l) => console.log(l.length));'],
      project.dir,
      consumerEnv(desktop.env),
    );
    expect(Number(cjs.stdout.trim())).toBeGreaterThan(0);
  });

  it("says how a consumer fixes an addon that does not load", () => {
    const failed = run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { listApps } from "axsnap"; try { await listApps(); } catch (e) { console.log(JSON.stringify(e)); }',
      ],
      project.dir,
      consumerEnv({ AXSNAP_NATIVE_PATH: join(work, "missing.node") }),
    );
    const error = JSON.parse(failed.stdout) as { code: string; hint: string };
    expect(error.code).toBe("PLATFORM_NOT_SUPPORTED");
    expect(error.hint).toContain('"npm rebuild axsnap"');
    // The packages binding.gyp's pkg-config calls need; libatspi is never used (GDBus talks to the bus).
    expect(error.hint).toContain("libglib2.0-dev");
    expect(error.hint).not.toContain("libatspi");
    expect(error.hint).not.toMatch(/scripts\/|build:native/);
  });

  it("runs the CLI: npx axsnap --help exits 0 with the usage on stdout", () => {
    const help = run("npx", ["--offline", "axsnap", "--help"], project.dir);
    expect(help.status, help.output).toBe(0);
    expect(help.stdout).toMatch(/snapshot/);
  });

  it("runs the installed CLI (one bundled file) on the desktop: a snapshot, then a click by its ref from another process", () => {
    const env = consumerEnv({ ...desktop!.env, XDG_STATE_HOME: join(work, "cli-state") });
    const cli = join(project.installed, "dist", "cli.js");
    const trace = join(work, "cli-trace");
    const snap = ok(
      process.execPath,
      [cli, "snapshot", "--app", "gtk3-widget-factory", "--json", "--trace", trace],
      project.dir,
      env,
    );
    // The bundle's chunks sit in dist/: the trace's header still names the installed package's version.
    const header = JSON.parse(readFileSync(join(trace, "trace.json"), "utf8")) as { axsnap: string };
    expect(header.axsnap).toBe(pkg.version);
    const data = JSON.parse(snap.stdout) as { ok: boolean; data: { snapshotId: string; text: string } };
    expect(data.ok).toBe(true);
    const line = data.data.text.split("\n").find((l) => /^\t*\d+ radio button Page 2\b/.test(l));
    expect(line, data.data.text).toBeDefined();
    const index = Number(/^\t*(\d+)/.exec(line!)![1]);
    const click = ok(
      process.execPath,
      [cli, "click", `@${data.data.snapshotId}:e${index}`, "--json"],
      project.dir,
      env,
    );
    const acted = JSON.parse(click.stdout) as { ok: boolean; data: { delivery: string } };
    expect(acted.ok, click.output).toBe(true);
    expect(acted.data.delivery).toMatch(/^delivered_/);
  });

  it("runs the installed MCP server through the CLI: it answers initialize and lists get_app_state", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [join(project.installed, "dist", "cli.js"), "mcp"], {
      cwd: project.dir,
      env: consumerEnv(desktop!.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    const listed = new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString("utf8");
        if (out.includes('"id":2')) resolve(out);
      });
      child.on("exit", (code) => reject(new Error(`the server exited ${code}: ${out}`)));
    });
    const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
    send({
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "consumer", version: "1" },
      },
    });
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/list" });
    try {
      const answers = await listed;
      expect(answers).toContain('"get_app_state"');
      expect(answers).toContain(`"serverInfo":{"name":"axsnap","version":"${pkg.version}"`);
    } finally {
      child.kill();
    }
  });

  it("installs without pkg-config, a compiler or make on PATH, from the prebuild", async () => {
    // PATH: a directory holding only node, npm, npx and a shell (npm runs scripts with sh),
    // so a node-gyp build would fail at its first pkg-config.
    const bin = join(work, "bin-node-only");
    mkdirSync(bin);
    for (const tool of ["node", "npm", "npx", "sh"]) {
      const found = run("/bin/sh", ["-c", `command -v ${tool}`], work).stdout.trim();
      expect(found, `${tool} on PATH`).not.toBe("");
      symlinkSync(tool === "node" ? process.execPath : found, join(bin, tool));
    }
    const env = consumerEnv({ PATH: bin });
    for (const tool of ["pkg-config", "g++", "make", "cc"])
      expect(run("/bin/sh", ["-c", `command -v ${tool} || echo none`], work, env).stdout.trim()).toBe("none");
    const { result, installed, dir } = install("without-toolchain", env);
    times.push(`npm install, no toolchain on PATH: ${(result.ms / 1000).toFixed(1)} s`);
    expect(existsSync(join(installed, "build")), result.output).toBe(false);
    expect(existsSync(join(installed, "prebuilds", prebuildDir, "axsnap.node"))).toBe(true);
    const apps = ok(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { listApps } from "axsnap"; console.log((await listApps()).map((a) => a.pid).join(" "));',
      ],
      dir,
      consumerEnv({ ...desktop!.env, PATH: bin }),
    );
    expect(apps.stdout.trim().split(" ").map(Number)).toContain(gtk!.pid);
  });
});
