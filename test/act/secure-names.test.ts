/**
 * Issue 9, item 9 (name part): a text-entry field whose name, description or
 * placeholder says password, passcode, PIN or 密码 is secure even when the
 * platform does not say so: its value never prints (`•••` when non-empty),
 * its record says `secure: true`, and `secureNames: false` turns the
 * heuristic off.
 */
import { describe, expect, it } from "vitest";
import { AxsnapError, render } from "../../lib/index.js";
import type { RawNode } from "../../lib/model/model.js";
import { secureByName } from "../../lib/render/roles.js";
import { win } from "../support/build.js";

const SECRET = "hunter2";

function field(extra: Partial<RawNode>): RawNode {
  return {
    role: "AXTextField",
    roleDescription: "text field",
    value: SECRET,
    settable: true,
    valueType: "string",
    ...extra,
  };
}

function one(node: RawNode, options: Parameters<typeof render>[1] = {}) {
  const r = render(win([node]), options);
  return { text: r.text, line: r.text.split("\n")[3]!, record: r.records[1]!, result: r };
}

describe("a field named like a password is secure", () => {
  it.each([
    ["title Password", { title: "Password" }],
    ["title Current password", { title: "Current password" }],
    ["title PIN code", { title: "PIN code" }],
    ["title Passcode", { title: "Passcode" }],
    ["title 密码", { title: "密码" }],
    ["title 请输入密码", { title: "请输入密码" }],
    ["title New Password:", { title: "New Password:" }],
    ["title SIM PIN", { title: "SIM PIN" }],
    ["description password", { description: "password" }],
    ["placeholder Enter your password", { placeholder: "Enter your password" }],
    ["a soft hyphen inside", { title: "Pass\u00ADword" }],
    ["a Cyrillic а inside", { title: "P\u0430ssword" }],
    ["fullwidth", { title: "ＰＡＳＳＷＯＲＤ" }],
  ])("%s", (_what, extra) => {
    const { text, line, record } = one(field(extra));
    expect(text).not.toContain(SECRET);
    expect(line).toContain("Value: •••");
    expect(record.secure).toBe(true);
    const compact = render(win([field(extra)]), { style: "compact" }).text;
    expect(compact).not.toContain(SECRET);
    expect(compact).toContain('value="•••"');
  });

  it.each([
    ["AT-SPI entry", { role: "entry", title: "Password" }],
    ["AT-SPI text", { role: "text", title: "PIN" }],
    ["AXTextArea", { role: "AXTextArea", title: "Passphrase or password" }],
    ["AT-SPI combo box", { role: "combo box", title: "Password" }],
    ["AXComboBox", { role: "AXComboBox", title: "Password" }],
    ["AT-SPI spin button", { role: "spin button", title: "PIN" }],
    ["AT-SPI dashed spin-button", { role: "spin-button", title: "PIN" }],
  ])("for the text-entry role %s", (_what, extra) => {
    const { roleDescription: _, ...node } = field(extra);
    const { text, record } = one(node);
    expect(text).not.toContain(SECRET);
    expect(record.secure).toBe(true);
  });

  it("prints no value for an empty one", () => {
    const { line } = one(field({ title: "Password", value: "" }));
    expect(line).toBe("\t1 text field (settable, string) Password");
  });

  it("keeps the text of the entry inside a secure combo box out too: the entry is the field (issue 31)", () => {
    const combo: RawNode = {
      role: "combo box",
      title: "Password",
      children: [
        { role: "text", value: SECRET, selectedText: SECRET, settable: true, states: { focused: true } },
      ],
    };
    const r = render(win([combo]));
    expect(r.text).not.toContain(SECRET);
    expect(r.selectedText).toBeUndefined();
    expect(r.records.map((x) => x.secure)).toEqual([false, true, true]);
  });

  it("keeps its value and selection out of the footer and result", () => {
    const r = render(win([field({ title: "Password", states: { focused: true }, selectedText: SECRET })]));
    expect(r.text).not.toContain(SECRET);
    expect(r.selectedText).toBeUndefined();
    expect(r.text.split("\n").at(-1)).toBe("The focused UI element is 1 text field.");
  });

  it("keeps its value out of its row's title and texts", () => {
    const row: RawNode = {
      role: "AXTable",
      roleDescription: "table",
      children: [
        {
          role: "AXRow",
          roleDescription: "row",
          children: [field({ title: "PIN" }), { role: "AXStaticText", value: "Card" }],
        },
      ],
    };
    const r = render(win([row]));
    expect(r.text).not.toContain(SECRET);
  });
});

describe("names that only look like a password word", () => {
  it.each([
    "Spinner",
    "pinned",
    "Pinterest",
    "Username",
    "Passport number",
    "Spin rate",
    "Shipping",
    "Compass",
  ])("%s is not secure", (title) => {
    const { line, record } = one(field({ title }));
    expect(line).toContain(`Value: ${SECRET}`);
    expect(record.secure).toBe(false);
  });

  it.each([
    [
      "a button",
      { role: "AXButton", roleDescription: "button", title: "Show password", actions: ["AXPress"] },
    ],
    ["static text", { role: "AXStaticText", roleDescription: "text", title: "Password", value: "Password" }],
    ["a checkbox", { role: "AXCheckBox", roleDescription: "checkbox", title: "Remember password", value: 1 }],
    ["a link", { role: "AXLink", roleDescription: "link", title: "Forgot password?" }],
  ])("%s named like one is not a secure field", (_what, node) => {
    const { record } = one(node as RawNode);
    expect(record.secure).toBe(false);
  });
});

describe("secureNames", () => {
  it("false turns the name heuristic off, not the platform's flag", () => {
    const named = one(field({ title: "Password" }), { secureNames: false });
    expect(named.line).toContain(`Value: ${SECRET}`);
    expect(named.record.secure).toBe(false);
    const platform = one(
      { role: "AXTextField", subrole: "AXSecureTextField", title: "Password", charCount: 3 },
      { secureNames: false },
    );
    expect(platform.line).toContain("Value: •••");
    expect(platform.record.secure).toBe(true);
  });

  it("true is the default", () => {
    expect(one(field({ title: "Password" }), { secureNames: true }).record.secure).toBe(true);
  });

  it.each([["yes"], [1], [null]])("refuses %s", (value) => {
    expect(() => render(win([]), { secureNames: value as never })).toThrow(AxsnapError);
    try {
      render(win([]), { secureNames: value as never });
    } catch (e) {
      expect((e as AxsnapError).code).toBe("INVALID_ARGUMENT");
    }
  });
});

describe("secureByName", () => {
  it("answers for text-entry fields only", () => {
    expect(secureByName(field({ title: "Password" }))).toBe(true);
    expect(secureByName(field({ placeholder: "PIN" }))).toBe(true);
    expect(secureByName(field({ title: "Name" }))).toBe(false);
    expect(secureByName({ role: "AXButton", title: "Password" })).toBe(false);
    expect(secureByName({ role: "entry", title: "Pinterest" })).toBe(false);
  });
});
