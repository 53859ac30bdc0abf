// A module hook that prints every module URL resolved, one "loaded <url>" line each, for
// tests of what an import costs: `node --import ./test/support/module-log.mjs ...`.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(
    "export async function resolve(s, c, next) { const r = await next(s, c); console.log('loaded ' + r.url); return r; }",
  )}`,
);
