/**
 * Who is at the other end of a connected Unix socket: the uid the kernel
 * recorded for the peer when it connected or listened (its credentials:
 * SO_PEERCRED on Linux, getpeereid on macOS). The CLI's warm process and its
 * clients (lib/doors/cli/daemon.ts, lib/doors/cli/daemon-client.ts) deal only with a
 * process of their own user, whatever the socket's path looked like when it
 * was checked: a directory above it that others may write in lets them swap
 * the path between the check and the connect.
 *
 * Loaded on every command the CLI hands to the warm process, so only node's
 * own modules and the tiny addon axsnap_peer.so (src-native/napi/peer_addon.cc:
 * libc only, about 1 ms to load and check where the full addon takes 7 or
 * more). The
 * full addon has the same function, for an install without the tiny one.
 * Here rather than under lib/doors/cli/: the package root is the directory above
 * this file's, from source, built and bundled alike (as for lib/native.ts).
 */
import type { Socket } from "node:net";
import { join } from "node:path";

type PeerUid = (fd: number) => number | null;

// fileURLToPath without node:url (a few ms of every start); POSIX paths only reach here.
const root = join(decodeURIComponent(new URL(".", import.meta.url).pathname), "..");

let loading: Promise<PeerUid | undefined> | undefined;

async function load(): Promise<PeerUid | undefined> {
  for (const file of [
    join(root, "build", "Release", "axsnap_peer.so"),
    join(root, "prebuilds", `${process.platform}-${process.arch}`, "axsnap_peer.so"),
  ]) {
    try {
      const module = { exports: {} as { peerUid?: PeerUid } };
      process.dlopen(module, file);
      if (typeof module.exports.peerUid === "function") return module.exports.peerUid;
    } catch {
      // Not built or not shipped here: the next place, then the full addon.
    }
  }
  try {
    const { loadNative } = await import("./native.js");
    const peerUid = loadNative().peerUid;
    return typeof peerUid === "function" ? peerUid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process at the other end of `socket` (connected, Unix domain)
 * runs as this process's user. False whenever that cannot be read: the
 * caller then deals with it as with a stranger.
 */
export async function peerIsOwnUser(socket: Socket): Promise<boolean> {
  const uid = process.geteuid?.();
  // libuv's descriptor of the connected socket (net.Socket has no public accessor for it).
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (uid === undefined || typeof fd !== "number" || fd < 0) return false;
  loading ??= load();
  const peerUid = await loading;
  return peerUid !== undefined && peerUid(fd) === uid;
}
