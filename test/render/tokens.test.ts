/**
 * The token estimate (lib/render/tokens.ts) against the real o200k count, on
 * what axsnap prints: every fixture tree in both styles, as a skeleton and
 * at budgets. Its stated error, TOKEN_ESTIMATE_ERROR, must hold on each text
 * of 200 tokens or more (shorter ones are dominated by a token or two).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { expect, it } from "vitest";
import {
  estimateTokens,
  type RawSnapshot,
  type RenderOptions,
  render,
  TOKEN_ESTIMATE_ERROR,
  type ViewOptions,
} from "../../lib/index.js";

const dir = join(import.meta.dirname, "..", "fixtures");

it("estimates o200k tokens of every fixture rendering within the stated error", () => {
  const views: (RenderOptions & ViewOptions)[] = [
    {},
    { style: "compact" },
    { skeleton: true },
    { maxTokens: 400 },
  ];
  let worst = 0;
  let texts = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
    const snap = JSON.parse(readFileSync(join(dir, file), "utf8")) as RawSnapshot;
    for (const view of views) {
      const text = render(snap, view).text;
      const real = encode(text).length;
      const err = (estimateTokens(text) - real) / real;
      if (real < 200) continue;
      texts++;
      worst = Math.max(worst, Math.abs(err));
      expect(Math.abs(err), `${file} ${JSON.stringify(view)}: ${real} real`).toBeLessThanOrEqual(
        TOKEN_ESTIMATE_ERROR,
      );
    }
  }
  expect(texts).toBeGreaterThan(20);
  console.log(`token estimate: worst error ${(worst * 100).toFixed(1)}% over ${texts} texts`);
});

it("counts scripts the vocabulary does not merge by their bytes, never low", () => {
  for (const text of ["𐀀𐀀𐀀𐀀 ᎀᎀ", "密码 确认", "Пароль и имя", "👍👍👍 ok", "a".repeat(64)])
    expect(estimateTokens(text), text).toBeGreaterThanOrEqual(
      encode(text).length * (1 - TOKEN_ESTIMATE_ERROR),
    );
});
