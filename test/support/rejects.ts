/** Awaiting a call that must be refused: its AxsnapError, or the test fails. */
import { expect } from "vitest";
import { AxsnapError } from "../../lib/index.js";

export async function rejects(p: Promise<unknown>): Promise<AxsnapError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AxsnapError);
    return e as AxsnapError;
  }
  throw new Error("expected a rejection");
}
