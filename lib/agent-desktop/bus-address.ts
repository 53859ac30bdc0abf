/**
 * D-Bus addresses as the specification spells them: in a key's value, every
 * byte outside [-0-9A-Za-z_/.\*] is %-escaped as two hex digits (the
 * specification's "optionally-escaped bytes" pass as they are). A path with
 * a space (an XDG_RUNTIME_DIR of "/run/user/a b") unescaped is no address:
 * dbus-daemon refuses it and a client cannot parse it.
 */

const PLAIN = /^[-0-9A-Za-z_/.\\*]$/;

/** A value of an address's key=value pair, its UTF-8 bytes escaped. */
export function escapeAddressValue(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += PLAIN.test(c) ? c : `%${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

/** The address of a bus listening on a unix socket at `path`. */
export function unixPathAddress(path: string): string {
  return `unix:path=${escapeAddressValue(path)}`;
}
