/**
 * The viewer page's style and script (view.ts embeds both). The script is a
 * plain string, not a compiled function, so that no build step or bundler
 * helper can leak into the page. It reads the trace from the JSON data block
 * and builds every node with createElement and textContent, never innerHTML:
 * titles, names and values in a trace are whatever an app said.
 *
 * Markup choices, checked against Chromium's AT-SPI mapping (so that axsnap
 * itself can read the page: test/linux/trace-viewer.test.ts): role=listbox is
 * a "list box" and role=option a "list item" with selectable/selected states;
 * a <div role=img aria-label> is a named "image"; a <mark aria-label> is a
 * "static" that keeps its name (Chromium maps mark to static).
 */

/** The colours tests look for in screenshots of the page. */
export const OUTLINE_COLOUR = "#e0007a";
export const REFUSED_COLOUR = "#c4001d";
export const UNCERTAIN_COLOUR = "#a86400";

export const PAGE_STYLE = `
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { display: flex; font: 14px/1.4 system-ui, sans-serif; color: #1d1d1f; background: #fff; }
nav { flex: 0 0 380px; overflow-y: auto; border-right: 1px solid #ccc; background: #f6f6f7; }
nav header { padding: 8px 10px; font-size: 12px; color: #555; border-bottom: 1px solid #ddd; }
#steps { list-style: none; margin: 0; padding: 0; outline: none; }
.step { padding: 6px 8px 6px 10px; border-left: 8px solid transparent; border-bottom: 1px solid #e4e4e4; cursor: pointer; word-break: break-word; }
.step.refused { background: #ffe3e3; border-left-color: ${REFUSED_COLOUR}; }
.step.uncertain { background: #fff3c4; border-left-color: ${UNCERTAIN_COLOUR}; }
.step[aria-selected="true"] { outline: 3px solid #1a5fb4; outline-offset: -3px; font-weight: 600; }
#steps:focus .step[aria-selected="true"] { outline-color: #0b3d91; }
main { flex: 1 1 auto; overflow-y: auto; padding: 12px 20px 40px; min-width: 0; }
h1 { font-size: 18px; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #555; margin: 0 0 8px; }
.banner { padding: 6px 10px; border-left: 8px solid; margin: 8px 0; }
.banner.refused { background: #ffe3e3; border-color: ${REFUSED_COLOUR}; }
.banner.uncertain { background: #fff3c4; border-color: ${UNCERTAIN_COLOUR}; }
.shots { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
figure { margin: 0; max-width: 100%; }
figcaption { font-size: 12px; color: #555; margin-bottom: 4px; }
.shot { position: relative; display: inline-block; max-width: 100%; line-height: 0; border: 1px solid #bbb; }
.shot img { display: block; max-width: 100%; height: auto; }
.outline { position: absolute; border: 3px solid ${OUTLINE_COLOUR}; pointer-events: none; }
pre { tab-size: 4; font: 12px/1.35 ui-monospace, monospace; background: #f6f6f7; padding: 8px; overflow-x: auto; white-space: pre; margin: 0; }
mark { background: #ffd1ea; color: inherit; outline: 1px solid ${OUTLINE_COLOUR}; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; margin: 0; }
dt { color: #555; }
dd { margin: 0; word-break: break-word; }
ul { margin: 4px 0; padding-left: 20px; }
`;

export const PAGE_SCRIPT = String.raw`"use strict";
(() => {
  const data = JSON.parse(document.getElementById("trace").textContent);
  const list = document.getElementById("steps");
  const main = document.getElementById("step");
  const steps = data.steps;
  let current = -1;

  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const add = (parent, ...kids) => { for (const k of kids) if (k) parent.appendChild(k); return parent; };
  const pct = (v, of) => (100 * v / of) + "%";

  steps.forEach((s, i) => {
    const li = el("li", { role: "option", id: "step-" + s.step.n, "aria-selected": "false", class: "step" + (s.flag ? " " + s.flag : "") }, s.name);
    li.addEventListener("click", () => select(i, true));
    list.appendChild(li);
  });

  function figure(label, id, targets) {
    const snap = id && data.snapshots[id];
    if (!snap) return null;
    const fig = el("figure");
    const title = snap.window && snap.window.title !== undefined ? snap.window.title : snap.app.name;
    add(fig, el("figcaption", {}, label + " · snapshot " + id + " · " + title));
    const shot = snap.shot;
    const src = shot && shot.file ? data.images[shot.file] : undefined;
    if (shot && shot.withheld) return add(fig, el("p", {}, "Screenshot withheld: this snapshot's text showed a secret."));
    if (!src) return add(fig, el("p", {}, shot ? "Screenshot file missing from the trace." : "No screenshot."));
    const box = el("div", { class: "shot" });
    const img = el("img", { alt: label + " screenshot: " + title, width: shot.pixelWidth, height: shot.pixelHeight });
    img.style.width = (shot.pixelWidth / (shot.scale || 1)) + "px";
    img.src = src;
    box.appendChild(img);
    for (const t of targets) {
      if (t.snapshot !== id || !t.frame) continue;
      const k = shot.scale || 1;
      const o = el("div", { class: "outline", role: "img", "aria-label": "target: " + t.line });
      o.style.left = pct(t.frame.x * k, shot.pixelWidth);
      o.style.top = pct(t.frame.y * k, shot.pixelHeight);
      o.style.width = pct(t.frame.w * k, shot.pixelWidth);
      o.style.height = pct(t.frame.h * k, shot.pixelHeight);
      box.appendChild(o);
    }
    return add(fig, box);
  }

  function snapshotText(id, marked, word) {
    const snap = data.snapshots[id];
    const pre = el("pre", { "aria-label": "Snapshot " + id });
    snap.text.split("\n").forEach((line, i) => {
      if (i > 0) pre.appendChild(document.createTextNode("\n"));
      const m = /^\t*(\d+) /.exec(line);
      const n = m ? Number(m[1]) : -1;
      if (marked.has(n)) pre.appendChild(el("mark", { "aria-label": word + " line " + n }, line));
      else pre.appendChild(document.createTextNode(line));
    });
    return pre;
  }

  function dl(pairs) {
    const d = el("dl");
    for (const [k, v] of pairs) if (v !== undefined && v !== null && v !== "") add(d, el("dt", {}, k), el("dd", {}, v));
    return d;
  }

  function render(entry) {
    const s = entry.step;
    const r = s.result;
    const e = s.error;
    const observation = !r && !e;
    main.replaceChildren();
    add(main, el("h1", { id: "step-title" }, entry.name));
    add(main, el("p", { class: "meta" }, s.door + " " + s.call + " · pid " + s.pid + " · " + entry.clock + " · " + s.method));
    if (e) add(main, el("p", { class: "banner refused" }, "REFUSED " + e.code + ": " + e.message));
    else if (entry.flag === "uncertain")
      add(main, el("p", { class: "banner uncertain" }, "UNCERTAIN: the action may or may not have happened; look again before repeating it."));

    const targets = s.targets || [];
    const seenId = observation ? s.after || s.before : s.before || s.after;
    const shots = el("section", { class: "shots", "aria-label": "Screenshots" });
    add(shots, figure(observation ? "Seen" : "Before", seenId, targets));
    if (s.after && s.after !== seenId) add(shots, figure("After", s.after, []));
    if (shots.childElementCount > 0) add(main, el("h2", {}, "Screenshots"), shots);

    if (seenId && data.snapshots[seenId]) {
      const marked = new Set(targets.filter((t) => t.snapshot === seenId).map((t) => t.index));
      for (const n of s.read || []) marked.add(n);
      add(main, el("h2", {}, "What the agent saw"), snapshotText(seenId, marked, observation ? "read" : "acted"));
    }

    add(main, el("h2", {}, "Reply"));
    const reply = el("section", { "aria-label": "Reply" });
    if (e) {
      add(reply, dl([["code", e.code], ["message", e.message], ["hint", e.hint], ["delivery", e.delivery], ["retry", e.retry]]));
      for (const [what, xs] of [["candidates", e.candidates], ["matches", e.matches]]) {
        if (!xs || xs.length === 0) continue;
        add(reply, el("h3", {}, what));
        const ul = add(el("ul"), ...xs.map((c) => el("li", {}, c.line + "  " + c.locator + (c.why ? " (" + c.why + ")" : ""))));
        add(reply, ul);
      }
    }
    if (r) {
      add(reply, dl([
        ["delivery", r.delivery + " (" + r.channel + "), retry " + r.retry],
        ["opened", (r.opened || []).map((w) => w.kind + " " + JSON.stringify(w.title || "")).join(", ")],
        ["closed", (r.closed || []).map((w) => w.kind + " " + JSON.stringify(w.title || "")).join(", ")],
        ["value", r.value === undefined ? undefined : String(r.value)],
      ]));
      if (r.changesText) add(reply, el("h3", {}, "Changes"), el("pre", { "aria-label": "Changes" }, r.changesText));
      if (r.notes && r.notes.length > 0) add(reply, el("h3", {}, "Notes"), add(el("ul"), ...r.notes.map((n) => el("li", {}, n))));
    }
    if (s.secret) add(reply, el("p", {}, "Typed a secret: replay reads it from $" + s.secret.env + "."));
    if (s.reply) add(reply, el("h3", {}, "Reply text"), el("pre", { "aria-label": "Reply text" }, s.reply));
    add(reply, el("h3", {}, "Arguments"), el("pre", { "aria-label": "Arguments" }, JSON.stringify(s.args, null, 2)));
    add(main, reply);

    const t = s.timings || {};
    const ms = (v) => (v === undefined ? undefined : v + " ms");
    add(main, el("h2", {}, "Timings"), dl([
      ["total", ms(t.ms)], ["locate", ms(t.locateMs)], ["settle", ms(t.settleMs)], ["trace", ms(t.traceMs)],
      ["settled", r && r.settled ? r.settled.mode + ", " + r.settled.events + " events" : undefined],
    ]));
  }

  function select(i, focus) {
    if (steps.length === 0) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    const items = list.children;
    if (current >= 0 && items[current]) items[current].setAttribute("aria-selected", "false");
    current = i;
    const li = items[i];
    li.setAttribute("aria-selected", "true");
    list.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
    render(steps[i]);
    try { history.replaceState(null, "", "#" + li.id); } catch (_) { /* a page without a history entry */ }
    if (focus) list.focus();
  }

  function fromHash() {
    const m = /^#step-(\d+)$/.exec(location.hash);
    if (!m) return -1;
    return steps.findIndex((s) => s.step.n === Number(m[1]));
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
    if (ev.key in moves) select(current + moves[ev.key], true);
    else if (ev.key === "Home") select(0, true);
    else if (ev.key === "End") select(steps.length - 1, true);
    else return;
    ev.preventDefault();
  });
  window.addEventListener("hashchange", () => { const i = fromHash(); if (i >= 0 && i !== current) select(i, false); });

  if (steps.length === 0) main.appendChild(el("p", {}, "This trace has no steps."));
  else select(Math.max(0, fromHash()), true);
})();
`;
