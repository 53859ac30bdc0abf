/**
 * How far axsnap agrees with Chromium's own account of its pages (issue 32):
 * for each page of test/pages/chromium-ax/, Chromium's AT-SPI tree as
 * scripts/chromium-ax-expected.py wrote it, against what axsnap printed of
 * the same page in a real Chromium on a headless desktop. Prints, per page
 * and in all, the share of Chromium's nodes axsnap printed (found), and of
 * those with its role, name and states.
 *
 *   npm run bench:chromium            # all pages
 *   npm run bench:chromium -- --diff  # and each difference, as the test's table keys it
 */
import { startDesktop } from "../scripts/desktop.mjs";
import {
  agreement,
  type Compared,
  differenceKey,
  measurePage,
  pageNames,
} from "../test/support/chromium-ax.js";

const showDiff = process.argv.includes("--diff");
const pct = (n: number, of: number) => (of === 0 ? "-" : `${((100 * n) / of).toFixed(1)}%`);

const desktop = await startDesktop();
for (const name of ["DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"])
  if (desktop.env[name] === undefined) delete process.env[name];
Object.assign(process.env, desktop.env);
const all: Compared[] = [];
try {
  console.log("page                      nodes  found    role     name     states");
  for (const page of pageNames()) {
    const got = await measurePage(desktop, page);
    all.push(...got);
    const a = agreement(got);
    console.log(
      `${page.padEnd(25)} ${String(a.nodes).padStart(5)}  ${pct(a.found, a.nodes).padStart(6)}  ${pct(a.role, a.nodes).padStart(6)}  ${pct(a.name, a.nodes).padStart(6)}  ${pct(a.states, a.nodes).padStart(6)}`,
    );
  }
} finally {
  await desktop.stop();
}
const a = agreement(all);
console.log(
  `${"ALL".padEnd(25)} ${String(a.nodes).padStart(5)}  ${pct(a.found, a.nodes).padStart(6)}  ${pct(a.role, a.nodes).padStart(6)}  ${pct(a.name, a.nodes).padStart(6)}  ${pct(a.states, a.nodes).padStart(6)}`,
);
if (showDiff)
  for (const c of all) {
    const key = differenceKey(c);
    if (key !== undefined)
      console.log(
        `${key}  (want ${c.want.join(" ") || "-"}; got ${c.got ? `[${c.got.role}] ${c.got.name} ${c.got.states.join(" ")}` : "nothing"})`,
      );
  }
