/**
 * Thunderbird (Gecko) on a headless desktop (issue 32 §7), one Thunderbird
 * for the file, on a fresh profile in the desktop's temporary HOME. A fresh
 * profile with no account shows the account wizard and cannot compose, so
 * the profile's user.js names one account that never connects (a POP3 server
 * at .invalid, no login at startup, no mail check; an SMTP server at
 * .invalid, never used: nothing is sent) and turns off the first-run pages
 * (the wizard, the default-client question, the start page): the wizard is
 * skipped, not clicked through. Gecko joins AT-SPI with GNOME_ACCESSIBILITY=1
 * (the test desktop also sets the bus's IsEnabled).
 *
 * The task, as an agent does it: in the window `thunderbird -compose` opened,
 * find the To, Subject and body fields by name, fill them, read them back.
 * The Subject is replaced by clicking it, select all and typing; a recipient
 * is added by typing it with a comma into the To field (Thunderbird turns it
 * into a pill); the body is typed into.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listWindows, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let tb: App;
let session: Session;
let started = 0;

const PREFS: Record<string, string | boolean> = {
  // First run: no account wizard, no default-client question, no start page, no telemetry notice.
  "mail.provider.suppress_dialog_on_startup": true,
  "mail.shell.checkDefaultClient": false,
  "mailnews.start_page.enabled": false,
  "toolkit.telemetry.reportingpolicy.firstRun": false,
  "datareporting.policy.dataSubmissionPolicyBypassNotification": true,
  "app.update.auto": false,
  // One identity to compose from, on servers that are never reached.
  "mail.accountmanager.accounts": "account1",
  "mail.accountmanager.defaultaccount": "account1",
  "mail.account.account1.identities": "id1",
  "mail.account.account1.server": "server1",
  "mail.identity.id1.fullName": "Axsnap Test",
  "mail.identity.id1.useremail": "axsnap@example.invalid",
  "mail.identity.id1.valid": true,
  "mail.identity.id1.smtpServer": "smtp1",
  "mail.server.server1.type": "pop3",
  "mail.server.server1.hostname": "pop.example.invalid",
  "mail.server.server1.userName": "axsnap",
  "mail.server.server1.name": "axsnap@example.invalid",
  "mail.server.server1.login_at_startup": false,
  "mail.server.server1.check_new_mail": false,
  "mail.smtpservers": "smtp1",
  "mail.smtpserver.smtp1.hostname": "smtp.example.invalid",
};

beforeAll(async () => {
  started = performance.now();
  desktop = await useDesktop();
  const profile = join(desktop.home, "thunderbird-profile");
  mkdirSync(profile);
  writeFileSync(
    join(profile, "user.js"),
    Object.entries(PREFS)
      .map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});\n`)
      .join(""),
  );
  tb = await startApp(
    { ...desktop, env: { ...desktop.env, GNOME_ACCESSIBILITY: "1" } },
    "thunderbird",
    ["--no-remote", "--profile", profile, "-compose", "to=a@example.com,subject=Hi"],
    { name: "Thunderbird", windowName: "Write: Hi", timeoutMs: 90_000 },
  );
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
  console.log(`thunderbird.test.ts: ${Math.round(performance.now() - started)} ms in all`);
});

const COMPOSE = { title: "Write:" };
const compose = () => session.snapshot({ app: tb.pid, window: COMPOSE, screenshot: false });

/** Snapshots the compose window until `test` holds, every 200 ms for at most 15 s. */
async function composeUntil(test: (s: Snapshot) => boolean, what: string): Promise<Snapshot> {
  const until = Date.now() + 15_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await compose();
    if (test(last)) return last;
    await sleep(200);
  }
  throw new Error(`${what} never showed; the last snapshot:\n${last?.text}`);
}

describe("Thunderbird (Gecko)", () => {
  it(
    "lists the main window and the compose window, and names the compose window's fields",
    async () => {
      const titles = (await listWindows(tb.pid, { deadlineMs: 10_000 })).map((w) => w.title);
      expect(titles.join(" | ")).toMatch(/Write: Hi - Thunderbird/);
      expect(titles.join(" | ")).toMatch(/Mozilla Thunderbird/);
      const snap = await compose();
      expect(snap.window.title).toBe("Write: Hi - Thunderbird");
      expect(snap.text).toMatch(/^\s*\d+ entry .*To with one address/m);
      expect(snap.text).toMatch(/^\s*\d+ label .*a@example\.com/m);
      expect(snap.text).toMatch(/^\s*\d+ entry .*Subject, Value: Hi\b/m);
      expect(snap.text).toMatch(/^\s*\d+ document web .*Message body/m);
      expect(snap.text).toMatch(/^\s*\d+ push button Send\b/m);
    },
    TIMEOUT,
  );

  it(
    "fills the Subject, a second recipient and the body, and reads them back (library)",
    async () => {
      let snap = await compose();
      const subject = indexIn(snap, /^\d+ entry .*Subject/);
      await session.click(`@${snap.id}:e${subject}`);
      await session.pressKey("ctrl+a", { app: tb.pid });
      await session.typeText("Hello from axsnap", { app: tb.pid });
      snap = await composeUntil(
        (s) => /entry .*Subject, Value: Hello from axsnap\b/.test(s.text),
        "the subject",
      );
      // The title follows the subject.
      expect(snap.window.title).toBe("Write: Hello from axsnap - Thunderbird");
      const to = indexIn(snap, /^\d+ entry .*To with one address/);
      await session.click(`@${snap.id}:e${to}`);
      await session.typeText("b@example.com,", { app: tb.pid });
      snap = await composeUntil((s) => /label .*b@example\.com/.test(s.text), "the second recipient");
      expect(snap.text).toMatch(/entry .*To with 2 addresses/);
      const body = indexIn(snap, /^\d+ document web .*Message body/);
      const typed = await session.typeText("Typed by axsnap.", { target: `@${snap.id}:e${body}` });
      expect(typed.delivery).not.toBe("not_delivered");
      snap = await composeUntil((s) => /paragraph .*Value: Typed by axsnap\./.test(s.text), "the body text");
    },
    TIMEOUT,
  );

  it(
    "reads the filled fields back through the CLI, by find",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-tb-cli-"));
      const cli = (args: string[]) => runCli([...args, "--session", dir], { AXSNAP_DAEMON: "off" });
      const subject = await cli(["find", "--app", String(tb.pid), "--window", "Write:", "--name", "Subject"]);
      expect(subject.code, subject.stderr).toBe(0);
      expect(subject.stdout).toMatch(/entry .*Subject, Value: Hello from axsnap/);
      const body = await cli(["find", "--app", String(tb.pid), "--window", "Write:", "--role", "paragraph"]);
      expect(body.stdout).toMatch(/paragraph .*Value: Typed by axsnap\./);
      const to = await cli(["find", "--app", String(tb.pid), "--window", "Write:", "--text", "example.com"]);
      expect(to.stdout).toMatch(/a@example\.com/);
      expect(to.stdout).toMatch(/b@example\.com/);
    },
    TIMEOUT,
  );
});
