/**
 * D-Bus addresses both ways: what the agent's desktop writes (escaped) and
 * what the warm process reads back to watch its desktop's sockets. A user's
 * DBUS_SESSION_BUS_ADDRESS may hold any escape, valid UTF-8 or not.
 */
import { describe, expect, it } from "vitest";
import { desktopSockets } from "../../lib/doors/cli/daemon.js";
import { escapeAddressValue, unixPathAddress } from "../../lib/observe/agent-desktop/bus-address.js";

describe("bus addresses", () => {
  it("a path escaped for an address reads back as itself", () => {
    const path = "/run/user/a b,c;d=e%f'é/bus";
    expect(desktopSockets({ DBUS_SESSION_BUS_ADDRESS: unixPathAddress(path) })).toEqual([path]);
    expect(escapeAddressValue("/tmp/x-y_z.*\\")).toBe("/tmp/x-y_z.*\\");
  });

  it("an escape that is no UTF-8 (%ff) is not watched, and does not throw", () => {
    expect(() => desktopSockets({ DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/a%ffb" })).not.toThrow();
    expect(desktopSockets({ DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/a%ffb", DISPLAY: ":7" })).toEqual([
      "/tmp/.X11-unix/X7",
    ]);
  });

  it("a broken escape (%g1, a lone %) is not watched", () => {
    expect(desktopSockets({ DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/a%g1" })).toEqual([]);
    expect(desktopSockets({ DBUS_SESSION_BUS_ADDRESS: "unix:abstract=/tmp/a%" })).toEqual([]);
  });
});
