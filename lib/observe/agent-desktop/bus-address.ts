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

/**
 * A value of an address read back: undefined where it is no address value (a broken escape) or its bytes
 * are no UTF-8, which no JS string can name as a path.
 */
export function unescapeAddressValue(value: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    if (value[i] !== "%") {
      bytes.push(...Buffer.from(value[i]!, "utf8"));
      continue;
    }
    const hex = value.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    bytes.push(Number.parseInt(hex, 16));
    i += 2;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
