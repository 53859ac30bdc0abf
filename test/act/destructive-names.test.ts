/**
 * Issue 9, item 11: names that print like a destructive word must be treated
 * as that word. Both sides are normalised (NFKC, case-folded, invisible and
 * format characters removed, confusables mapped to a Latin skeleton) before
 * the substring match.
 */
import { afterEach, describe, expect, it } from "vitest";
import { destructiveWordIn, normalizeForMatch } from "../../lib/model/policy/normalize.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, DEFAULT_DESTRUCTIVE_WORDS, type Session } from "../../lib/session/session.js";

const lookAlikes: [string, string, string][] = [
  ["a soft hyphen", "Del\u00ADete", "delete"],
  ["a zero-width space", "De\u200Blete", "delete"],
  ["a zero-width joiner", "Del\u200Dete", "delete"],
  ["a word joiner", "Dele\u2060te", "delete"],
  ["a BOM inside", "Del\uFEFFete", "delete"],
  ["a bidi override", "\u202EDelete\u202C", "delete"],
  ["a variation selector", "De\uFE0Flete", "delete"],
  ["Cyrillic е (U+0435)", "D\u0435lete", "delete"],
  ["Cyrillic capitals", "\u0405END", "send"],
  ["fullwidth capitals", "ＤＥＬＥＴＥ", "delete"],
  ["fullwidth small", "ｄｅｌｅｔｅ", "delete"],
  ["Cyrillic е in 'Send money'", "S\u0435nd money", "send"],
  ["Greek ε, ο and ν look-alikes", "R\u03B5m\u03BF\u03BDe", "remove"],
  ["Greek capital epsilon", "D\u0395LETE", "delete"],
  ["mathematical bold", "\u{1D403}\u{1D41E}\u{1D425}\u{1D41E}\u{1D42D}\u{1D41E}", "delete"],
  ["a capital I for a small l", "DeIete", "delete"],
  ["Latin small capitals", "\u1D05\u1D07\u029F\u1D07\u1D1B\u1D07", "delete"],
  ["doubled spaces", "Sign   out", "sign out"],
  ["a no-break space", "Log\u00A0out", "log out"],
  ["an ideographic space", "Sign\u3000out", "sign out"],
  ["Cyrillic о and р in 'Empty trash'", "Em\u0440ty tr\u0430sh", "empty trash"],
  ["Chinese with a zero-width space", "删\u200B除", "删除"],
  ["Chinese plain", "删除文件", "删除"],
];

describe("normalizeForMatch", () => {
  it("folds case, width and compatibility forms", () => {
    expect(normalizeForMatch("ＤＥＬＥＴＥ")).toBe("delete");
    expect(normalizeForMatch("ﬁle")).toBe("file");
    expect(normalizeForMatch("Straße")).toBe("strasse");
  });

  it("removes invisible and format characters and collapses blanks", () => {
    expect(normalizeForMatch("  De\u200B\u00ADl\u2066ete \u200E  now\t")).toBe("delete now");
  });

  it("maps Cyrillic and Greek look-alikes to Latin", () => {
    const cyrillic =
      "\u0430\u0432\u0441\u0435\u04BB\u0456\u0458\u043A\u043C\u043D\u043E\u0440\u0455\u0442\u0443\u0445\u0501\u051B\u051D";
    expect(normalizeForMatch(cyrillic)).toBe("abcehijkmhopstyxdqw");
    expect(normalizeForMatch(cyrillic.toUpperCase())).toBe("abcehijkmhopstyxdqw");
    expect(normalizeForMatch("\u0391\u039F\u03A1\u039D\u03A4\u039A\u0399\u0395")).toBe("aopntkie");
    expect(normalizeForMatch("\u03B1\u03BF\u03C1\u03BD\u03C4\u03BA\u03B9\u03B5")).toBe("aopvtkie");
  });

  it("keeps text in other scripts as it is", () => {
    expect(normalizeForMatch("删除")).toBe("删除");
    expect(normalizeForMatch("Удалить")).not.toBe("");
  });
});

describe("destructiveWordIn", () => {
  it.each(lookAlikes)("finds the word behind %s", (_what, name, word) => {
    expect(destructiveWordIn(name, DEFAULT_DESTRUCTIVE_WORDS)).toBe(word);
  });

  it("names the configured word, as configured", () => {
    expect(destructiveWordIn("D\u0435lete all", ["Delete"])).toBe("Delete");
    expect(destructiveWordIn("delete all", ["ＤＥＬＥＴＥ"])).toBe("ＤＥＬＥＴＥ");
  });

  it("leaves harmless names alone", () => {
    for (const name of ["Save", "Open", "Settings", "Cancel", "", "\u200B", "保存"])
      expect(destructiveWordIn(name, DEFAULT_DESTRUCTIVE_WORDS)).toBeUndefined();
  });

  it("never matches a configured word that normalises to nothing", () => {
    expect(destructiveWordIn("Save", ["\u200B"])).toBeUndefined();
  });
});

describe("the session's destructive guard", () => {
  const native = loadNative();
  const open: { b: NativeBackend; s: Session }[] = [];
  const frame = { x: 100, y: 100, w: 800, h: 600 };
  afterEach(async () => {
    for (const { b, s } of open.splice(0)) {
      await s.close();
      await b.close();
    }
  });
  function setup(title: string, options: Parameters<typeof createSession>[0] = {}) {
    const button = {
      role: "push button",
      title,
      actions: ["click"],
      frame: { x: 120, y: 120, w: 200, h: 20 },
    };
    const b = new native.NativeBackend("fake", {
      apps: [
        {
          name: "Editor",
          pid: 77,
          windows: [{ title: "W", frame, root: { role: "frame", title: "W", frame, children: [button] } }],
        },
      ],
    });
    const s = createSession({ backend: b, deadlineMs: 1000, ...options });
    open.push({ b, s });
    return { b, s };
  }

  it.each(lookAlikes)("refuses a button named with %s without confirm", async (_what, name) => {
    const { b, s } = setup(name);
    await s.snapshot({ app: "Editor", screenshot: false });
    await expect(s.click(1, { snapshot: false })).rejects.toMatchObject({ code: "POLICY_DENIED" });
    expect(b.fakeLog()).toEqual([]);
  });

  it("asks confirm with the configured word as the reason", async () => {
    const reasons: string[] = [];
    const { b, s } = setup("S\u0435nd money", {
      destructiveWords: ["Send"],
      confirm: (r) => {
        reasons.push(r.reason);
        return true;
      },
    });
    await s.snapshot({ app: "Editor", screenshot: false });
    await s.click(1, { snapshot: false });
    expect(reasons).toEqual(['the target\'s name contains "Send"']);
    expect(b.fakeLog()).toEqual(["action 2 click"]);
  });

  it("refuses a configured word that normalises to nothing", () => {
    expect(() => createSession({ destructiveWords: ["\u200B\u00AD"] })).toThrow(/destructiveWords/);
  });
});
