/** Matching and the shortest unique locator over fixture trees (issue 34, design 2.2 and 2.3). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import { createSnapshot, type Snapshot } from "../../lib/observe/snapshot.js";
import { locatorOf } from "../../lib/session/locator/compute.js";
import { parseLocator, printLocator } from "../../lib/session/locator/grammar.js";
import { matchLocator } from "../../lib/session/locator/match.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const load = (name: string): Snapshot =>
  createSnapshot({ raw: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) });

const save = load("save-dialog");
const gtk = load("gtk-widget-factory");
const zenity = load("zenity-forms");
const chrome = load("chrome-form");

const indices = (snap: Snapshot, s: string) => matchLocator(snap, parseLocator(s)).map((r) => r.index);
const shortest = (snap: Snapshot, index: number) => printLocator(locatorOf(snap, snap.records[index]!)!);

describe("matchLocator", () => {
  it("matches role words of either style, and names exactly", () => {
    expect(indices(save, 'button "Save"')).toEqual([20]);
    expect(indices(save, 'AXButton "Save"')).toEqual([20]);
    expect(indices(save, 'button "save"')).toEqual([]);
    expect(indices(gtk, 'push button "Close"')).toEqual([7]);
    expect(indices(gtk, 'button "Close"')).toEqual([7]);
  });

  it("tests a regular expression, an id and an ordinal", () => {
    expect(indices(save, "button /^(save|cancel)$/i")).toEqual([19, 20]);
    expect(indices(save, 'text field [id="saveAsNameTextField"]')).toEqual([10]);
    expect(indices(gtk, 'check box "checkbutton" [nth=3]')).toEqual([18]);
    expect(indices(gtk, 'check box "checkbutton" [nth=9]')).toEqual([]);
  });

  it("keeps a step's matches inside the step before", () => {
    expect(indices(chrome, 'button "Close"').length).toBe(3);
    expect(indices(chrome, 'tab "Pricing – Example" >> button "Close"')).toEqual([7]);
    expect(indices(gtk, 'panel "Frame" >> push button "Nested button"')).toEqual([26]);
    expect(indices(gtk, 'panel "Frame" >> push button "Button"')).toEqual([]);
  });

  it("checks the app and the window against the snapshot's, and an empty path names line 0", () => {
    expect(indices(zenity, 'app=zenity >> window:dialog="Sign in"')).toEqual([0]);
    expect(indices(zenity, 'app=Zenity >> window=/^sign/i >> push button "OK"')).toEqual([8]);
    // No kind: any kind; a kind given must be the window's.
    expect(indices(zenity, 'app=zenity >> window="Sign in" >> push button "OK"')).toEqual([8]);
    expect(indices(zenity, 'app=zenity >> window:window="Sign in" >> push button "OK"')).toEqual([]);
    expect(indices(zenity, 'app=mousepad >> push button "OK"')).toEqual([]);
    expect(indices(save, 'window="Untitled" >> button "Save"')).toEqual([20]);
  });

  it("stops a regular expression that backtracks without end", () => {
    const l = parseLocator("text /(a+)+$/");
    const long = { ...save, records: save.records.map((r) => ({ ...r, title: `${"a".repeat(40)}!` })) };
    expect(() => matchLocator(long as Snapshot, l)).toThrow(AxsnapError);
  });
});

describe("locatorOf", () => {
  it("gives the shortest forms on the save dialog", () => {
    expect(shortest(save, 20)).toBe('app=TextEdit >> window="Untitled" >> button "Save"');
    expect(shortest(save, 0)).toBe('app=TextEdit >> window="Untitled"');
    expect(locatorOf(save, save.records[10]!)!.path).toEqual([{ role: "text field", name: "Save As:" }]);
    expect(locatorOf(save, save.records[18]!)!.path).toEqual([{ role: "checkbox", name: "Hide extension" }]);
  });

  it("gives the shortest forms on the widget factory", () => {
    const path = (i: number) => printLocator({ path: locatorOf(gtk, gtk.records[i]!)!.path });
    expect(path(2)).toBe('radio button "Page 2"');
    expect(path(26)).toBe('push button "Nested button"');
    expect(path(17)).toBe('check box "checkbutton" [nth=2]');
    expect(path(13)).toBe('combo box "Andrea" >> text');
  });

  it("names the window's kind when it is not a plain window", () => {
    expect(shortest(zenity, 8)).toBe('app=zenity >> window:dialog="Sign in" >> push button "OK"');
  });

  it("brings in an ancestor when the name is shared", () => {
    expect(shortest(chrome, 5)).toBe(
      'app="Google Chrome" >> window="Sign up – Example" >> tab "Inbox (3) – Example Mail" >> button "Close"',
    );
  });

  it("gives none in a snapshot whose line 0 is not the window", () => {
    const subtree = { ...gtk, records: gtk.records.slice(24, 27) } as Snapshot;
    expect(locatorOf(subtree, subtree.records[0]!)).toBeUndefined();
  });
});
