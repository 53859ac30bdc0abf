/**
 * `axsnap desktop start|stop|list|env`: the agent's desktops from the
 * command line (lib/observe/agent-desktop/), and `--desktop NAME`, which puts the
 * process on one before anything observes.
 */

import { resolve } from "node:path";
import type { DesktopListing } from "../../observe/agent-desktop/desktops.js";
import { runningDesktop } from "../../observe/agent-desktop/desktops.js";
import { exportLines, listDesktops, startDesktop, stopDesktop } from "../../observe/agent-desktop/index.js";
import type { Invocation } from "./grammar.js";
import { nextCommand, shellWord } from "./next.js";

type DesktopInvocation = Extract<Invocation, { kind: "desktop" }>;

function listingText(d: DesktopListing): string {
  if (d.state === "gone") return `${d.name}\tgone\t${d.reason ?? ""}\t(cleaned up)\n`;
  const owner = d.mode === "api" ? `while pid ${d.owner} runs` : "until `axsnap desktop stop`";
  const place = d.session === "wayland" ? `WAYLAND_DISPLAY=${d.waylandDisplay}` : `DISPLAY=${d.display}`;
  return `${d.name}\trunning\t${place}\t${d.width}x${d.height}${d.windowManager ? "\topenbox" : ""}\t${owner}\tsince ${d.startedAt}\n`;
}

export async function desktopCommand(inv: DesktopInvocation): Promise<{ data: unknown; text: string }> {
  switch (inv.action) {
    case "start": {
      const d = await startDesktop({
        ...(inv.name === undefined ? {} : { name: inv.name }),
        ...(inv.size === undefined ? {} : { size: inv.size }),
        windowManager: inv.wm,
        wayland: inv.wayland,
        detached: true,
      });
      // Runnable as printed: what can be started there. Launching one needs its name, so that line is a pattern.
      const session = inv.globals.session === undefined ? {} : { session: resolve(inv.globals.session) };
      const next = nextCommand(["apps", "--launchable"], { desktop: d.name, ...session });
      const data = {
        name: d.name,
        session: d.session,
        display: d.display,
        ...(d.waylandDisplay === undefined ? {} : { waylandDisplay: d.waylandDisplay }),
        busAddress: d.busAddress,
        a11yBusAddress: d.a11yBusAddress,
        width: d.width,
        height: d.height,
        windowManager: inv.wm,
        pids: d.pids,
        stateFile: d.stateFile,
        next,
      };
      const text = [
        d.session === "wayland"
          ? `started Wayland desktop ${d.name}: WAYLAND_DISPLAY=${d.waylandDisplay} ${d.width}x${d.height}, pids gnome-shell ${d.pids.compositor}, dbus ${d.pids.dbus}, pipewire ${d.pids.pipewire}, wireplumber ${d.pids.wireplumber}`
          : `started desktop ${d.name}: DISPLAY=${d.display} ${d.width}x${d.height}${inv.wm ? " with openbox" : ""}, pids Xvfb ${d.pids.xvfb}, dbus ${d.pids.dbus}${d.pids.windowManager ? `, openbox ${d.pids.windowManager}` : ""}`,
        `it runs until \`axsnap desktop stop ${d.name}\``,
        `next: ${next}`,
        `then \`${nextCommand(["launch", "PROGRAM"], { desktop: d.name, ...session })}\` with one of them (it prints the snapshot command to run); or point a shell at it: eval "$(axsnap desktop env ${shellWord(d.name)})"`,
        "",
      ].join("\n");
      return { data, text };
    }
    case "stop": {
      const r = await stopDesktop(inv.name!);
      return {
        data: r,
        text: r.wasRunning
          ? `stopped desktop ${r.name}\n`
          : `desktop ${r.name} was gone already (${r.reason}); cleaned up\n`,
      };
    }
    case "list": {
      const desktops = await listDesktops();
      return {
        data: { desktops },
        text: desktops.length === 0 ? "no desktops\n" : desktops.map(listingText).join(""),
      };
    }
    case "env": {
      const s = runningDesktop(inv.name!);
      return {
        data: {
          name: s.name,
          session: s.session ?? "x11",
          display: s.display,
          ...(s.waylandDisplay === undefined ? {} : { waylandDisplay: s.waylandDisplay }),
          busAddress: s.busAddress,
        },
        text: exportLines(s),
      };
    }
  }
}
