/**
 * Issue 19, section 7: fields the app leaves without a name (no LABELLED_BY,
 * no AXTitleUIElement) take the text of the label beside them, as screen
 * readers infer it: to the left on the same line, or just above, among the
 * field's siblings. The name is marked inferred on the line and in the
 * record, the label keeps its own line, and identity ignores it.
 */
import { describe, expect, it } from "vitest";
import { render } from "../../lib/index.js";
import type { RawNode, RawSnapshot, Rect } from "../../lib/model/model.js";
import { identityOf, sameIdentity } from "../../lib/render/identity.js";
import { body, win } from "../support/build.js";

const at = (x: number, y: number, w: number, h: number): Rect => ({ x, y, w, h });

const label = (title: string, frame: Rect, extra: Partial<RawNode> = {}): RawNode => ({
  role: "label",
  title,
  frame,
  ...extra,
});
const entry = (frame: Rect, extra: Partial<RawNode> = {}): RawNode => ({
  role: "text",
  settable: true,
  valueType: "string",
  value: "",
  frame,
  actions: ["activate"],
  ...extra,
});

/** A GTK window: frame → filler → the children given (a grid lays its children out flat). */
function gtk(children: RawNode[]): RawSnapshot {
  const s = win([{ role: "filler", frame: at(100, 50, 800, 600), children }]);
  s.platform = "linux";
  s.root = { role: "frame", title: "Form", frame: at(100, 50, 800, 600), children: s.root.children! };
  return s;
}

const lines = (s: RawSnapshot, style: "tree" | "compact" = "tree") =>
  render(s, { style })
    .text.split("\n")
    .map((l) => l.trim())
    .filter((l) => /^\d/.test(l));

describe("labels inferred from the layout (GTK-shaped trees)", () => {
  it("a label left of a field on its line names it, marked inferred; the label keeps its line", () => {
    const s = gtk([label("User name", at(112, 62, 80, 24)), entry(at(200, 62, 240, 24))]);
    const r = render(s);
    const text = body(r.text).map((l) => l.trim());
    expect(text).toContain("2 text (settable, string) Label: User name");
    expect(text).toContain("1 label User name");
    const field = r.records.find((x) => x.role === "text")!;
    expect(field.title).toBe("User name");
    expect(field.nameSource).toBe("inferred");
    // Identity stays what the app says: the field's own role, no name.
    expect(field.identity).toEqual({ role: "text" });
  });

  it("prints the inferred name in the compact style as a label, not as the app's name", () => {
    const s = gtk([label("User name", at(112, 62, 80, 24)), entry(at(200, 62, 240, 24))]);
    expect(lines(s, "compact")).toContain('2: textbox label="User name"');
  });

  it("a label just above a field, aligned with it, names it", () => {
    const s = gtk([label("Notes", at(112, 100, 60, 18)), entry(at(112, 122, 300, 24))]);
    expect(lines(s)).toContain("2 text (settable, string) Label: Notes");
  });

  it("a label far from its field on the same line is not taken", () => {
    const s = gtk([label("Comment", at(112, 62, 70, 24)), entry(at(560, 62, 240, 24))]);
    expect(lines(s)).toContain("2 text (settable, string)");
    expect(render(s).records[2]!.nameSource).toBeUndefined();
  });

  it("a label far above its field is not taken", () => {
    const s = gtk([label("Comment", at(112, 62, 70, 18)), entry(at(112, 200, 240, 24))]);
    expect(lines(s)).toContain("2 text (settable, string)");
  });

  it("a heading above a field is not its label", () => {
    const s = gtk([
      { role: "heading", title: "Delivery", frame: at(112, 100, 120, 20) },
      entry(at(112, 124, 240, 24)),
    ]);
    expect(lines(s)).toContain("2 text (settable, string)");
  });

  it("a text that is a sentence is no label", () => {
    const long = "Enter the name of the person who will receive this parcel at the door";
    const s = gtk([label(long, at(112, 100, 560, 18)), entry(at(112, 122, 240, 24))]);
    expect(lines(s)).toContain("2 text (settable, string)");
  });

  it("two fields on one row each take the label left of it, never the other's", () => {
    const s = gtk([
      label("From", at(112, 62, 40, 24)),
      entry(at(160, 62, 120, 24)),
      label("To", at(300, 62, 30, 24)),
      entry(at(340, 62, 120, 24)),
      // A third field right after the second, with no label of its own between them.
      entry(at(470, 62, 60, 24)),
    ]);
    const t = lines(s);
    expect(t).toContain("2 text (settable, string) Label: From");
    expect(t).toContain("4 text (settable, string) Label: To");
    expect(t).toContain("5 text (settable, string)");
  });

  it("a label that names another field by relation, or is closer to another field, is not taken", () => {
    const s = gtk([
      label("City", at(112, 62, 40, 24), { handle: 7 }),
      entry(at(160, 62, 200, 24), { title: "City", labelledBy: [7], handle: 8 }),
      // Just below "City": the label is taken by its relation.
      entry(at(112, 92, 200, 24), { handle: 9 }),
      // "Zip" is left of one field and above another: the closer one, on its line, takes it.
      label("Zip", at(112, 140, 40, 24), { handle: 10 }),
      entry(at(160, 140, 200, 24), { handle: 11 }),
      entry(at(112, 170, 200, 24), { handle: 12 }),
    ]);
    const t = lines(s);
    expect(t).toContain("1 text (settable, string) City");
    expect(t).toContain("2 text (settable, string)");
    expect(t).toContain("4 text (settable, string) Label: Zip");
    expect(t).toContain("5 text (settable, string)");
    // The relation-named field hides its label line; the inferred one keeps it.
    expect(t).not.toContain("0 label City");
    expect(t).toContain("3 label Zip");
  });

  it("a field with a name of its own keeps it", () => {
    const s = gtk([label("Search", at(112, 62, 60, 24)), entry(at(180, 62, 200, 24), { title: "Query" })]);
    expect(lines(s)).toContain("2 text (settable, string) Query");
  });

  it("another widget between the label and the field blocks it", () => {
    const s = gtk([
      label("Size", at(112, 62, 40, 24)),
      { role: "push button", title: "Reset", actions: ["click"], frame: at(160, 62, 60, 24) },
      entry(at(230, 62, 100, 24)),
    ]);
    expect(lines(s)).toContain("3 text (settable, string)");
  });

  it("spin buttons, sliders and combo boxes take labels too; buttons do not", () => {
    const s = gtk([
      label("Copies", at(112, 62, 60, 24)),
      { role: "spin button", settable: true, valueType: "number", value: 1, frame: at(180, 62, 80, 24) },
      label("Volume", at(112, 92, 60, 24)),
      { role: "slider", settable: true, valueType: "number", value: 30, frame: at(180, 92, 200, 24) },
      label("Colour", at(112, 122, 60, 24)),
      { role: "combo box", actions: ["press"], frame: at(180, 122, 120, 24) },
      label("Go", at(112, 152, 60, 24)),
      { role: "push button", actions: ["click"], frame: at(180, 152, 120, 24) },
    ]);
    const t = lines(s);
    expect(t).toContain("2 spin button (settable, float) Label: Copies, Value: 1");
    expect(t).toContain("4 slider (settable, float) Label: Volume, Value: 30");
    expect(t).toContain("6 combo box Label: Colour");
    expect(t).toContain("8 push button");
  });

  it("a field wrapped alone in a box still finds the label beside its box", () => {
    const s = gtk([
      label("Port", at(112, 62, 40, 24)),
      { role: "filler", frame: at(160, 62, 100, 24), children: [entry(at(160, 62, 100, 24))] },
    ]);
    expect(lines(s)).toContain("2 text (settable, string) Label: Port");
  });

  it("a field whose inferred label says password is secure: its value is not printed", () => {
    const s = gtk([
      label("Password", at(112, 62, 70, 24)),
      entry(at(190, 62, 200, 24), { value: "hunter2" }),
    ]);
    const r = render(s);
    expect(r.text).not.toContain("hunter2");
    expect(body(r.text).map((l) => l.trim())).toContain(
      "2 text (settable, string) Label: Password, Value: •••",
    );
    expect(r.records[2]!.secure).toBe(true);
  });

  it("issue 31 item 3: focused with its text selected, it prints no selection, in the text or the result", () => {
    const s = gtk([
      label("PIN:", at(112, 62, 40, 24)),
      entry(at(160, 62, 200, 24), { value: "4711", selectedText: "4711", states: { focused: true } }),
    ]);
    for (const style of ["tree", "compact"] as const) {
      const r = render(s, { style });
      expect(r.text).not.toContain("4711");
      expect(r.text).not.toMatch(/Selected text/);
      expect(r.selectedText).toBeUndefined();
      expect(r.records[2]!.secure).toBe(true);
    }
    // The footer still names the focused element, as for any secure field.
    expect(render(s).text).toMatch(/The focused UI element is 2 text\.$/);
    // With the name rule off, an inferred label secures nothing either (the render option, as documented).
    expect(render(s, { secureNames: false }).text).toContain("Selected text: [4711]");
  });

  it("issue 31 item 3: inside a list row its value stays out of the row's text line", () => {
    const row: RawNode = {
      role: "list item",
      frame: at(100, 60, 400, 30),
      states: { selectable: true },
      children: [label("PIN:", at(112, 62, 40, 24)), entry(at(160, 62, 200, 24), { value: "4711" })],
    };
    const r = render(gtk([{ role: "list", frame: at(100, 60, 400, 90), children: [row] }]));
    expect(r.text).not.toContain("4711");
    expect(r.text).toMatch(/list item .*PIN:/);
  });

  it("two unnamed fields stay unproven, whatever their labels: an inferred name never makes identity", () => {
    const s = gtk([
      label("First", at(112, 62, 50, 24)),
      entry(at(170, 62, 200, 24)),
      label("Last", at(112, 92, 50, 24)),
      entry(at(170, 92, 200, 24)),
    ]);
    const r = render(s);
    const fields = r.records.filter((x) => x.role === "text");
    expect(fields.map((f) => f.title)).toEqual(["First", "Last"]);
    for (const f of fields) {
      expect(f.identity).toEqual({ role: "text" });
      expect(f.proof).toEqual({ unique: false, reason: "duplicates", matches: 2 });
    }
  });

  it("a field described by the app is named by it; a description that only repeats the value is none", () => {
    const s = gtk([
      label("Search", at(112, 62, 60, 24)),
      entry(at(180, 62, 200, 24), { description: "Find files" }),
      label("Volume", at(112, 92, 60, 24)),
      {
        role: "slider",
        settable: true,
        valueType: "number",
        value: 0,
        description: "0",
        frame: at(180, 92, 200, 24),
      },
    ]);
    const t = lines(s);
    expect(t).toContain("2 text (settable, string) Description: Find files");
    expect(t).toContain("4 slider (settable, float) Label: Volume, Description: 0, Value: 0");
  });

  it("the field is the same element whatever label is beside it, and its live read matches its record", () => {
    const field = entry(at(170, 62, 200, 24));
    const before = render(gtk([label("First", at(112, 62, 50, 24)), field])).records[2]!;
    const relabelled = render(gtk([label("Given name", at(80, 62, 82, 24)), field])).records[2]!;
    const alone = render(gtk([field])).records[1]!;
    expect(before.title).toBe("First");
    expect(relabelled.title).toBe("Given name");
    expect(sameIdentity(before.identity, relabelled.identity)).toBe(true);
    expect(sameIdentity(before.identity, alone.identity)).toBe(true);
    // An action reads the element alone, without its neighbours: that read must match the record.
    expect(sameIdentity(identityOf(field), before.identity)).toBe(true);
  });

  it("a disabled label names no enabled field (gtk3-widget-factory's demo labels beside its spin buttons)", () => {
    const spin = (x: number, enabled: boolean, y = 325): RawNode => ({
      role: "spin button",
      settable: true,
      valueType: "number",
      value: 50,
      states: { enabled },
      frame: at(x, y, 116, 34),
    });
    const s = gtk([
      label("label", at(115, 325, 32, 34), { states: { enabled: true } }),
      label("label", at(167, 325, 32, 34), { states: { enabled: false } }),
      spin(219, true),
      spin(355, false),
      // A disabled field keeps the enabled label beside it.
      label("Retries", at(112, 400, 60, 24), { states: { enabled: true } }),
      spin(180, false, 395),
    ]);
    const t = lines(s);
    expect(t).toContain("3 spin button (settable, float) Value: 50");
    expect(t).toContain("4 spin button (disabled, settable, float) Value: 50");
    expect(t).toContain("6 spin button (disabled, settable, float) Label: Retries, Value: 50");
    expect(
      render(s)
        .records.filter((r) => r.nameSource === "inferred")
        .map((r) => r.title),
    ).toEqual(["Retries"]);
  });

  it("nothing is inferred without frames", () => {
    const s = gtk([
      { role: "label", title: "Name" },
      { role: "text", settable: true, valueType: "string" },
    ]);
    expect(lines(s)).toContain("2 text (settable, string)");
  });
});

describe("labels inferred from the layout (macOS-shaped trees)", () => {
  const axText = (value: string, frame: Rect): RawNode => ({
    role: "AXStaticText",
    roleDescription: "text",
    value,
    frame,
  });
  const axField = (frame: Rect, extra: Partial<RawNode> = {}): RawNode => ({
    role: "AXTextField",
    roleDescription: "text field",
    settable: true,
    valueType: "string",
    value: "",
    frame,
    ...extra,
  });

  it("static texts (their text in the value) name text fields, sliders, pop-ups and steppers", () => {
    const s = win([
      {
        role: "AXGroup",
        roleDescription: "group",
        frame: at(100, 80, 800, 300),
        children: [
          axText("Email:", at(120, 100, 60, 22)),
          axField(at(190, 100, 240, 22)),
          axText("Volume", at(120, 140, 60, 22)),
          {
            role: "AXSlider",
            roleDescription: "slider",
            settable: true,
            valueType: "number",
            value: 0.5,
            frame: at(190, 142, 200, 18),
          },
          axText("Format", at(120, 180, 60, 22)),
          {
            role: "AXPopUpButton",
            roleDescription: "pop up button",
            value: "PNG",
            actions: ["AXPress"],
            frame: at(190, 180, 120, 22),
          },
          axText("Count", at(120, 220, 60, 22)),
          {
            role: "AXIncrementor",
            roleDescription: "stepper",
            value: 3,
            actions: ["AXIncrement", "AXDecrement"],
            frame: at(190, 220, 20, 22),
          },
        ],
      },
    ]);
    const r = render(s);
    const t = body(r.text).map((l) => l.trim());
    expect(t).toContain("2 text field (settable, string) Label: Email:");
    expect(t).toContain("1 text Email:");
    expect(t).toContain("4 slider (settable, float) Label: Volume, Value: 0.5");
    expect(t).toContain("6 pop up button Label: Format, Value: PNG");
    expect(r.records[8]!.title).toBe("Count");
    expect(r.records[8]!.nameSource).toBe("inferred");
  });

  it("a web heading above a field is no label (AXHeading)", () => {
    const s = win([
      {
        role: "AXGroup",
        roleDescription: "group",
        frame: at(100, 80, 800, 300),
        children: [
          {
            role: "AXHeading",
            roleDescription: "heading",
            title: "Shipping",
            frame: at(120, 100, 200, 24),
            children: [axText("Shipping", at(120, 100, 200, 24))],
          },
          axField(at(120, 128, 240, 22)),
        ],
      },
    ]);
    const t = body(render(s).text).map((l) => l.trim());
    expect(
      t.some((l) => /text field \(settable, string\)$/.test(l)),
      t.join("\n"),
    ).toBe(true);
  });

  it("a label that names a field by AXTitleUIElement is not taken again by its neighbour", () => {
    const s = win([
      {
        role: "AXGroup",
        roleDescription: "group",
        frame: at(100, 80, 800, 300),
        children: [
          { ...axText("Name", at(120, 100, 60, 22)), handle: 3 },
          axField(at(190, 100, 240, 22), { title: "Name", labelledBy: [3], handle: 4 }),
          axField(at(120, 126, 240, 22), { handle: 5 }),
        ],
      },
    ]);
    const t = body(render(s).text).map((l) => l.trim());
    expect(t).toContain("1 text field (settable, string) Name");
    expect(t).toContain("2 text field (settable, string)");
  });
});
