// A failure that is not an AxsnapError (a bug) reads the same in every door: one code, and, from an action,
// nothing promised about what reached the app; each door words the hint in its own terms.
import { describe, expect, it } from "vitest";
import { errorData } from "../../lib/doors/cli/output.js";
import { errorResult } from "../../lib/doors/mcp/tools.js";

describe("an unexpected failure in every door", () => {
  it("is INTERNAL, delivery uncertain and unsafe to retry from an action, with a door's own hint", () => {
    const cli = errorData(new TypeError("boom"), "mousepad");
    const mcp = JSON.parse((errorResult(new TypeError("boom"), true).content[0] as { text: string }).text);
    for (const e of [cli, mcp]) {
      expect(e).toMatchObject({
        code: "INTERNAL",
        message: "boom",
        delivery: "delivery_uncertain",
        retry: "unsafe",
      });
    }
    expect(cli.hint).toContain("axsnap snapshot --app mousepad");
    expect(mcp.hint).toContain("get_app_state");
  });

  it("from an observation promises nothing was sent", () => {
    const mcp = JSON.parse((errorResult(new Error("x"), false).content[0] as { text: string }).text);
    expect(mcp).toMatchObject({ code: "INTERNAL", delivery: "not_delivered", retry: "safe" });
  });
});
