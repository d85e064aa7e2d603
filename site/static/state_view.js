// Draws the state a script leaves after a step (the JSON of oplang::to_json, state_view.h):
// each topic's log as a row of cells, under it one lane per subscription with its committed
// position, its cursor, the messages it holds (holder, deadline) and its dead letters; then
// what each subscription's numbers are, the returned messages waiting out a delay, consumer
// groups and push subscriptions waiting for a handler. Used by the playground and the rule
// pages, so both draw alike. Plain DOM; the drawing's data-* attributes name what each mark
// stands for (the site test reads them).
"use strict";
(function () {
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c !== null && c !== undefined) e.append(c);
    }
    return e;
  }

  // A payload short enough for a cell: the first 8 characters and an ellipsis.
  function short(text) {
    return text.length > 9 ? text.slice(0, 8) + "\u2026" : text;
  }

  // The offsets a topic's drawing spans: its kept log, the end (where the next message
  // goes), and every position or held message a subscription marks in it (a dead letter of
  // a message no longer kept is listed, not drawn).
  function span(topic) {
    let lo = topic.oldest;
    const hi = topic.end;
    for (const s of topic.subscriptions) {
      lo = Math.min(lo, s.committed, s.cursor, ...s.held.map((h) => h.offset));
    }
    return [lo, hi];
  }

  function logRow(topic, lo, hi) {
    const kept = new Map(topic.log.map((c) => [c.offset, c.payload]));
    const row = [el("div", { class: "label" }, "log")];
    for (let o = lo; o <= hi; ++o) {
      if (o === hi) {
        row.push(el("div", { class: "cell next", "data-offset": o, title: `offset ${o}: the next publish` },
                    el("span", { class: "off" }, String(o)), el("span", { class: "payload" }, "next")));
      } else if (kept.has(o)) {
        const p = kept.get(o);
        row.push(el("div", { class: "cell", "data-offset": o, "data-payload": p, title: `offset ${o}: ${p}` },
                    el("span", { class: "off" }, String(o)), el("span", { class: "payload" }, short(p))));
      } else {
        row.push(el("div", { class: "cell gone", "data-offset": o, title: `offset ${o}: not kept (R3)` },
                    el("span", { class: "off" }, String(o)), el("span", { class: "payload" }, "gone")));
      }
    }
    return row;
  }

  function lane(topic, s, lo, hi) {
    const held = new Map(s.held.map((h) => [h.offset, h]));
    const dead = new Set(s.dead.map((d) => d.offset));
    const row = [el("div", { class: "label", title: s.kind }, s.name, el("small", {}, " " + s.kind))];
    for (let o = lo; o <= hi; ++o) {
      const h = held.get(o);
      const mark = el("div", {
        class: "mark" + (h ? " held" : "") + (dead.has(o) ? " dead" : ""),
        "data-topic": topic.name, "data-sub": s.name, "data-offset": o,
        "data-committed": o === s.committed, "data-cursor": o === s.cursor,
        "data-holder": h && h.member, "data-deadline": h && h.deadline, "data-dead": dead.has(o),
      });
      if (o === s.committed) {
        mark.append(el("span", { class: "badge committed", title: "committed position" }, "committed"));
      }
      if (o === s.cursor) {
        mark.append(el("span", { class: "badge cursor", title: "cursor: next offset never handed out" }, "cursor"));
      }
      if (h) {
        mark.append(el("span", { class: "holder", title: `held by ${h.member} until ${h.deadline}` },
                       h.member, el("br"), "\u2264 " + h.deadline));
      }
      if (dead.has(o)) mark.append(el("span", { class: "dead-mark", title: "a dead letter" }, "dead"));
      row.push(mark);
    }
    return row;
  }

  function numbers(s, now) {
    const parts = [`committed ${s.committed}`, `cursor ${s.cursor}`, `backlog ${s.backlog}`,
                   `in flight ${s.in_flight}`, `delivered ${s.delivered}`, `redelivered ${s.redelivered}`,
                   `confirmed ${s.confirmed}`, `dead-lettered ${s.dead_lettered}`];
    for (const k of ["skipped", "filtered", "redriven", "purged"]) if (s[k]) parts.push(`${k} ${s[k]}`);
    if (s.paused) parts.push("paused");
    const li = el("li", { "data-sub": s.name, "data-kind": s.kind },
                  el("strong", {}, s.name), ` (${s.kind}): `, el("span", { class: "counts" }, parts.join(", ")));
    if (s.retry_waits.length) {
      // R24: the model says when, not which offset (state_view.h).
      li.append(el("br"), "returned messages, not offered again before: ",
                ...s.retry_waits.map((t, i) => el("span", { class: "retry" + (t <= now ? " ready" : ""),
                                                            "data-not-before": t },
                                                  (i ? ", " : "") + t + (t <= now ? " (ready)" : ""))));
    }
    if (s.dead.length) {
      li.append(el("br"), "dead letters:");
      const ul = el("ul", { class: "dead-letters" });
      for (const d of s.dead) {
        ul.append(el("li", { "data-offset": d.offset, "data-attempts": d.attempts, "data-reason": d.reason,
                             "data-died-at": d.died_at },
                     `${d.offset} ${short(d.payload)}: ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}, ` +
                     `${d.reason}, at ${d.died_at}`));
      }
      li.append(ul);
    }
    return li;
  }

  function topicSection(topic, now) {
    const head = el("h4", {}, topic.name);
    const section = el("section", { class: "topic", "data-topic": topic.name, "data-partitions": topic.partitions,
                                    "data-oldest": topic.oldest, "data-end": topic.end }, head);
    if (topic.partitions > 1 || topic.end === undefined || topic.oldest === undefined) {
      head.append(el("small", {}, ` partitioned into ${topic.partitions} (R29), each a topic below` +
                                  (topic.end === undefined ? "" : `; ${topic.end} messages published in all`)));
      return section;
    }
    head.append(el("small", {}, ` keeps [${topic.oldest}, ${topic.end})`));
    const [lo, hi] = span(topic);
    const grid = el("div", { class: "grid" });
    grid.style.gridTemplateColumns = `9em repeat(${hi - lo + 1}, 5.4em)`;
    grid.append(...logRow(topic, lo, hi));
    for (const s of topic.subscriptions) grid.append(...lane(topic, s, lo, hi));
    section.append(el("div", { class: "scroll" }, grid));
    if (topic.subscriptions.length) {
      section.append(el("ul", { class: "numbers" }, ...topic.subscriptions.map((s) => numbers(s, now))));
    } else {
      section.append(el("p", { class: "none" }, "no subscriptions"));
    }
    return section;
  }

  /** The drawing of one state (an element to put in the page). */
  function draw(state) {
    const root = el("div", { class: "state", "data-step": state.step, "data-now": state.now },
                    el("p", { class: "state-head" },
                       state.step ? `After step ${state.step}` : "Before the first step",
                       `, the clock at ${state.now} ms`));
    if (!state.topics.length) root.append(el("p", { class: "none" }, "no topics"));
    for (const t of state.topics) root.append(topicSection(t, state.now));
    if (state.groups.length) {
      const ul = el("ul", { class: "groups" });
      for (const g of state.groups) {
        const owners = g.partitions.map((p) => `${p.topic}: ${p.owner || "nobody"}` +
                                               (p.owner ? ` since gen ${p.since}` : ""));
        ul.append(el("li", { "data-topic": g.topic, "data-group": g.name },
                     `${g.name} on ${g.topic}${g.push ? " (push)" : ""}, generation ${g.generation}, ` +
                     `members [${g.members.join(", ")}]; ${owners.join("; ")}`));
      }
      root.append(el("h4", {}, "Consumer groups (R32)"), ul);
    }
    if (state.waiting_for_handler.length) {
      root.append(el("h4", {}, "Waiting for a handler (R20)"),
                  el("ul", { class: "waiting" }, ...state.waiting_for_handler.map((w) => el("li", {}, w))));
    }
    return root;
  }

  /** A trace's text as clickable steps: each "[N] op" line and its outcome in a
   *  span.step[data-step=N]; the text stays byte for byte the same. */
  function fillTrace(pre, output) {
    pre.textContent = "";
    const lines = output.split(/(?<=\n)/);
    let current = null;
    for (const line of lines) {
      const m = /^\[(\d+)\] /.exec(line);
      if (m) {
        current = el("span", { class: "step", "data-step": m[1], tabindex: "0", role: "button",
                               title: `show the state after step ${m[1]}` });
        pre.append(current);
      } else if (!line.startsWith(" ")) {
        current = null;
      }
      if (current) current.append(line);
      else pre.append(line);
    }
    return pre.querySelectorAll("span.step").length;
  }

  /** Clicking (or Enter on) a step of `pre` draws stateOf(N) into `panel`. Returns select(N). */
  function attach(pre, panel, stateOf) {
    function select(n) {
      for (const s of pre.querySelectorAll("span.step")) {
        const on = s.dataset.step === String(n);
        s.classList.toggle("selected", on);
        s.setAttribute("aria-pressed", on ? "true" : "false");
      }
      panel.textContent = "";
      const state = stateOf(n);
      if (state) panel.append(draw(state));
      panel.dataset.step = String(n);
    }
    pre.addEventListener("click", (e) => {
      const s = e.target.closest("span.step");
      if (s) select(Number(s.dataset.step));
    });
    pre.addEventListener("keydown", (e) => {
      const s = e.target.closest("span.step");
      if (s && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        select(Number(s.dataset.step));
      }
    });
    return select;
  }

  window.StateView = { draw, fillTrace, attach };
})();
