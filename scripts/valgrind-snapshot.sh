#!/usr/bin/env bash
# Leak check of axsnap's native code under valgrind, on its own headless desktop.
#
# Starts the desktop with gtk3-widget-factory (scripts/desktop.mjs run), and
# on it runs, under valgrind, a short Node script: SNAPSHOTS snapshots with a
# screenshot through the public API, each released, then the backend closed,
# then a normal process exit. Then reads valgrind's log: every "definitely
# lost" loss record, and which of them are ours (a frame in axsnap.node or in
# a source file under src-native/).
#
#   scripts/valgrind-snapshot.sh
#
# Environment:
#   SNAPSHOTS           snapshots to take (default 5)
#   VALGRIND_TIMEOUT    seconds before valgrind is killed (default 900)
#   AXSNAP_NATIVE_PATH  the .node to load (default: build/Release); point it at
#                       a build with -g to get file:line in the stacks
#   VALGRIND_KEEP=1     keep the work dir (log, inner script) even on success
#
# Node runs with --jitless: V8 then generates no machine code at run time, so
# valgrind needs no --smc-check=all (measured: with the JIT and
# --smc-check=all the same run took 65 s instead of 55 s, same result).
#
# Output: the summary on stdout, then one JSON line
#   {"definitelyLostBytes":N,"definitelyLostRecords":N,"oursBytes":N,"ourRecords":N,
#    "seconds":S,"snapshots":N,"log":"...","records":[{bytes,blocks,ours,frames:[...]}]}
# (seconds: the valgrind run, desktop start and stop included; log: valgrind's
# log, removed with the work dir on success unless VALGRIND_KEEP=1)
# Exit status: 0 no definitely-lost record is ours; 1 at least one is ours;
# 2 the check could not run (valgrind or the desktop missing, node failed, ...).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
snapshots=${SNAPSHOTS:-5}
timeout_s=${VALGRIND_TIMEOUT:-900}

fail() {
  echo "valgrind-snapshot: $*" >&2
  exit 2
}

command -v valgrind >/dev/null 2>&1 || fail "valgrind is not installed; run scripts/install-deps.sh"
command -v node >/dev/null 2>&1 || fail "node is not on PATH"
[[ "$snapshots" =~ ^[1-9][0-9]*$ ]] || fail "SNAPSHOTS must be a positive integer, got $snapshots"
if [ -z "${AXSNAP_NATIVE_PATH:-}" ] && [ ! -f "$root/build/Release/axsnap.node" ]; then
  fail "build/Release/axsnap.node is missing; run npm run build:native"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/axsnap-valgrind-XXXXXX") || fail "mktemp failed"
log="$work/valgrind.log"
inner="$work/inner.mts"  # .mts: an ES module wherever it lives (top-level await)
done_marker="$work/inner-done"

# The script valgrind runs. Generous deadlines: everything is 20-50x slower under valgrind.
cat >"$inner" <<EOF
import { writeFileSync } from "node:fs";
import { desktopBackend, snapshot } from "$root/lib/observe/desktop.ts";

const count = ${snapshots};
for (let i = 1; i <= count; i++) {
  const t0 = performance.now();
  const s = await snapshot({ app: "gtk3-widget-factory", screenshot: true, deadlineMs: 300_000 });
  if (!s.screenshot) throw new Error("snapshot " + i + " has no screenshot");
  process.stderr.write(
    "valgrind-snapshot: snapshot " + i + "/" + count + ": " + s.records.length + " records, png " +
      s.screenshot.data.length + " bytes, " + Math.round(performance.now() - t0) + " ms\n",
  );
  await s.release();
}
await (await desktopBackend()).close();
writeFileSync("${done_marker}", "done\n");
// No process.exit(): the process ends when nothing keeps the event loop alive.
EOF

cd "$root" || fail "cannot cd to $root"
echo "valgrind-snapshot: $snapshots snapshots under valgrind; log $log" >&2
start=$(date +%s.%N)
node "$root/scripts/desktop.mjs" run --gtk-widget-factory -- \
  timeout --signal=KILL "$timeout_s" \
  valgrind --leak-check=full --show-leak-kinds=definite --num-callers=40 --error-exitcode=0 \
  --trace-children=no --fullpath-after= --log-file="$log" \
  node --jitless --import tsx "$inner" >&2
status=$?
end=$(date +%s.%N)
seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "valgrind-snapshot: valgrind run took $seconds s (exit status $status)" >&2

if [ "$status" -ne 0 ] || [ ! -f "$done_marker" ]; then
  [ -f "$log" ] && tail -n 40 "$log" >&2
  echo "valgrind-snapshot: work dir kept: $work" >&2
  { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; } && fail "valgrind was killed after VALGRIND_TIMEOUT=${timeout_s} s"
  fail "the snapshot script did not finish under valgrind (exit status $status)"
fi
grep -q "LEAK SUMMARY\|All heap blocks were freed" "$log" || {
  echo "valgrind-snapshot: work dir kept: $work" >&2
  fail "valgrind's log has no leak summary: $log"
}

LOG="$log" SECONDS_TAKEN="$seconds" SNAPSHOTS="$snapshots" node --input-type=module -e '
import { readFileSync } from "node:fs";

try {
  const text = readFileSync(process.env.LOG, "utf8");
  // Lines of the main process only: "==PID== message".
  const lines = text.split("\n").map((l) => /^==\d+== ?(.*)$/.exec(l)?.[1]).filter((l) => l !== undefined);
  const num = (s) => Number(s.replaceAll(",", ""));
  const records = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^([\d,]+)(?: \([\d,]+ direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks are definitely lost in loss record/.exec(lines[i]);
    if (!m) continue;
    const frames = [];
    for (i++; i < lines.length && /^\s+(at|by) 0x/.test(lines[i]); i++) frames.push(lines[i].trim());
    i--;
    const ours = frames.some((f) => f.includes("axsnap.node") || f.includes("src-native/"));
    records.push({ bytes: num(m[1]), blocks: num(m[2]), ours, frames });
  }
  const summary = /definitely lost: ([\d,]+) bytes in ([\d,]+) blocks/.exec(lines.join("\n"));
  const definitelyLostBytes = summary ? num(summary[1]) : 0;
  const mine = records.filter((r) => r.ours);
  const oursBytes = mine.reduce((a, r) => a + r.bytes, 0);

  const out = [];
  out.push(`valgrind: definitely lost ${definitelyLostBytes} bytes in ${records.length} loss records`);
  out.push(`valgrind: ours (axsnap.node or src-native/): ${oursBytes} bytes in ${mine.length} records`);
  for (const r of records.filter((r) => !r.ours))
    out.push(`  not ours: ${r.bytes} bytes in ${r.blocks} blocks, ${r.frames.slice(0, 4).join(" <- ")}`);
  for (const [n, r] of mine.entries()) {
    out.push(`  OURS #${n + 1}: ${r.bytes} bytes in ${r.blocks} blocks`);
    const first = r.frames.findIndex((f) => f.includes("axsnap.node") || f.includes("src-native/"));
    for (const f of r.frames.slice(0, Math.max(first + 4, 8))) out.push(`    ${f}`);
  }
  console.log(out.join("\n"));
  console.log(
    JSON.stringify({
      definitelyLostBytes,
      definitelyLostRecords: records.length,
      oursBytes,
      ourRecords: mine.length,
      seconds: Number(process.env.SECONDS_TAKEN),
      snapshots: Number(process.env.SNAPSHOTS),
      log: process.env.LOG,
      records,
    }),
  );
  process.exitCode = mine.length > 0 ? 1 : 0;
} catch (error) {
  console.error(`valgrind-snapshot: could not read the log: ${error?.stack ?? error}`);
  process.exitCode = 2;
}
'
result=$?
if [ "$result" -eq 0 ] && [ -z "${VALGRIND_KEEP:-}" ]; then
  rm -rf -- "$work"
else
  echo "valgrind-snapshot: work dir kept: $work" >&2
fi
exit "$result"
