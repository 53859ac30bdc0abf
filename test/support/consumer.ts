/**
 * Consumer-test support: a temporary project that installs the packed axsnap
 * tarball offline, as a user would with `npm install <tarball>`.
 *
 * Why a lockfile is written first: npm 11's `npm install <spec>` asks the
 * registry for each new dependency's full packument, which `npm ci` never
 * fetches (it reads versions from package-lock.json), so `--offline` fails
 * with ENOTCACHED on a machine whose cache was filled by `npm ci`. The
 * project therefore starts with a package-lock.json that pins axsnap's
 * runtime dependencies at the versions, tarball URLs and integrities of this
 * repository's lockfile; npm then takes the tarballs from the cache by
 * integrity and fetches nothing.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

interface PackageJson {
  name: string;
  version: string;
  license?: string;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Where node_modules resolution finds `name` from the package at `from` ("" is the project). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

function tarballUrl(registry: string, path: string, entry: LockEntry): string {
  const name = entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const bare = name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
  return `${registry.replace(/\/?$/, "/")}${name}/-/${bare}-${entry.version}.tgz`;
}

/**
 * Writes package.json and package-lock.json of a consumer project in `dir`
 * whose one dependency is `tarball`, named `file:<relativeTarball>` (relative
 * to `dir`, as `npm install <relativeTarball>` records it); `registry` gives
 * the tarball URLs of lockfile entries that have none (npm's
 * omit-lockfile-registry-resolved).
 */
export function writeConsumerProject(
  dir: string,
  repoRoot: string,
  tarball: string,
  relativeTarball: string,
  registry: string,
): void {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as PackageJson;
  const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const spec = `file:${relativeTarball}`;
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const runtime = { ...pkg.dependencies, ...pkg.optionalDependencies };

  // The runtime closure of the repository's own dependencies, at their lockfile paths.
  const packages: Record<string, LockEntry> = {};
  const queue: Array<[from: string, name: string, optional: boolean]> = Object.keys(runtime).map((name) => [
    "",
    name,
    name in (pkg.optionalDependencies ?? {}),
  ]);
  while (queue.length > 0) {
    const [from, name, optional] = queue.shift()!;
    const path = resolveIn(lock.packages, from, name);
    if (!path) {
      if (optional) continue;
      throw new Error(
        `package-lock.json has no entry for ${name} (needed by ${from || "axsnap"}); run npm install`,
      );
    }
    if (packages[path]) continue;
    const entry = { ...lock.packages[path]! };
    if (entry.link)
      throw new Error(`${name} is a linked package in package-lock.json; a consumer cannot install it`);
    delete entry.dev;
    delete entry.devOptional;
    if (!entry.resolved) entry.resolved = tarballUrl(registry, path, entry);
    packages[path] = entry;
    for (const dep of Object.keys(entry.dependencies ?? {})) queue.push([path, dep, false]);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) queue.push([path, dep, true]);
    for (const [dep, range] of Object.entries(entry.peerDependencies ?? {}))
      if (range && !entry.peerDependenciesMeta?.[dep]?.optional) queue.push([path, dep, false]);
  }

  const project = {
    name: "axsnap-consumer",
    version: "1.0.0",
    private: true,
    type: "module",
    dependencies: { axsnap: spec },
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(project, null, 2)}\n`);
  const consumerLock = {
    name: project.name,
    version: project.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: project.name, version: project.version, dependencies: project.dependencies },
      "node_modules/axsnap": {
        version: pkg.version,
        resolved: spec,
        integrity,
        hasInstallScript: true,
        ...(pkg.license ? { license: pkg.license } : {}),
        ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
        ...(pkg.optionalDependencies ? { optionalDependencies: pkg.optionalDependencies } : {}),
        ...(pkg.bin ? { bin: pkg.bin } : {}),
        ...(pkg.engines ? { engines: pkg.engines } : {}),
      },
      ...packages,
    },
  };
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(consumerLock, null, 2)}\n`);
}
