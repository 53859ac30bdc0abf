/**
 * Putting this process on an agent's desktop: DISPLAY and the session bus
 * of the desktop in process.env, before the desktop backend is created (it
 * reads them when it connects, lib/observe/desktop-backend.ts), and the desktop's
 * marker remembered for the apps launchApp starts (so they end with it).
 *
 * One process observes one desktop: once its backend is connected to one,
 * moving to another is INVALID_ARGUMENT (the addon holds that bus and that
 * X connection for the process's life).
 */

import { AxsnapError } from "../../model/errors.js";
import { desktopBackendTarget } from "../desktop-backend.js";
import { runningDesktop, variablesOf } from "./desktops.js";
import type { AgentDesktop } from "./start.js";
import { type DesktopState, MARKER } from "./state.js";

let bound:
  | { name: string; id: string; display: string; busAddress: string; session: "x11" | "wayland" }
  | undefined;

/** A desktop named, or a handle startDesktop returned. */
export type DesktopRef = string | Pick<AgentDesktop, "name">;

/**
 * Points this process at the desktop (by name or handle): DESKTOP_NOT_FOUND,
 * DESKTOP_GONE, or INVALID_ARGUMENT when the process already observes
 * another one. Returns the desktop's state. `clean: false` leaves a gone
 * desktop's remains for the caller that reports it (the CLI's entry only
 * peeks, to pick the warm process; the command then says DESKTOP_GONE).
 */
export function useDesktop(desktop: DesktopRef, options: { clean?: boolean } = {}): DesktopState {
  const name = typeof desktop === "string" ? desktop : desktop?.name;
  const state = runningDesktop(name as string, options.clean !== false);
  const target = desktopBackendTarget();
  if (target && (target.display !== state.display || target.busAddress !== state.busAddress))
    throw new AxsnapError(
      "INVALID_ARGUMENT",
      `this process already observes the desktop at DISPLAY=${target.display || "(none)"} (bus ${target.busAddress || "(none)"}); it cannot move to the desktop ${state.name} (${state.session === "wayland" ? `Wayland, bus ${state.busAddress}` : state.display})`,
      {
        hint: "one process reaches one desktop: pass the desktop before the first observation, or use another process for the other desktop",
      },
    );
  const { set, unset } = variablesOf(state);
  for (const k of unset) delete process.env[k];
  Object.assign(process.env, set);
  bound = {
    name: state.name,
    id: state.id,
    display: state.display,
    busAddress: state.busAddress,
    session: state.session ?? "x11",
  };
  return state;
}

/** The agent's desktop this process was put on and still points at, if any: its name and session type. */
export function boundDesktop(): { name: string; session: "x11" | "wayland" } | undefined {
  if (!bound || Object.keys(launchMarker()).length === 0) return undefined;
  return { name: bound.name, session: bound.session };
}

/**
 * The marker variable for an app launched now, when this process was put on
 * a desktop and still points at it (not when process.env was changed since).
 */
export function launchMarker(): Record<string, string> {
  if (!bound) return {};
  // A Wayland desktop's display is "" (no X server): DISPLAY stays unset there.
  if (
    (process.env.DISPLAY ?? "") !== bound.display ||
    process.env.DBUS_SESSION_BUS_ADDRESS !== bound.busAddress
  )
    return {};
  return { [MARKER]: bound.id };
}
