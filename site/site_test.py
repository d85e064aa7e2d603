"""The spec site in a real browser: builds it (scripts/spec-site), then opens it from the file
system in headless Chromium and checks that
  - the playground shows, for every example script, byte for byte what the native
    `spec-trace --model-only` prints (the script passed through the page's #s= address),
  - each example's page shows that same trace (computed at generation time by the
    WebAssembly model under node),
  - a script that does not parse shows the error with its line and column (as spec-trace
    reports them), and an over-large script is refused with a message,
  - every SPEC rule has its page, and every link and anchor inside the site resolves,
  - the drawing of the state after each step (state_view.js), in the playground for every
    example and on every rule page that draws one, clicked step by step: it must show what
    the WebAssembly model's JSON says (playground_state(), run under node), field for field,
    and what the native model says when asked (the script's first N steps run by
    `spec-trace --model-only` with observing ops after them: topics, end_offset,
    oldest_offset, subscriptions, stats, dead_letters, group_stats, waiting_for_handler, a
    fresh pull subscription polling the whole log for the payloads, offset_for_time for the
    clock; each held message's holder and deadline by an ack of that holder one ms before the
    deadline, accepted, and at it, late). Read from what the page shows: the marks' columns
    are matched to the log cells above them by position, the numbers from the text.
Prints one line per failure and exits 1 on any; one clear line if a tool is missing.
Usage: site_test.py --root ROOT --out SITE_DIR --spec-trace PATH [--no-build]"""

import argparse
import fcntl
import html.parser
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


class Dom(html.parser.HTMLParser):
    """Ids, links and the text of the elements the test reads, from a page's DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.text, self.attrs = set(), [], {}, {}
        self.open = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
            self.text.setdefault(a["id"], "")
            self.attrs[a["id"]] = a
        if tag == "body":
            self.attrs["body"] = a
        for key in ("href", "src"):
            if key in a:
                self.links.append((key, a[key]))
        if tag not in ("br", "meta", "link", "input", "img"):
            self.open.append(a.get("id"))

    def handle_endtag(self, tag):
        if self.open and tag not in ("br", "meta", "link", "input", "img"):
            self.open.pop()

    def handle_data(self, data):
        for i in self.open:
            if i:
                self.text[i] += data


def parse(text):
    d = Dom()
    d.feed(text)
    return d


def chromium_dom(chromium, url, profile):
    """The page's DOM after its scripts ran (virtual time lets the page finish first)."""
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                           "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False)
    return done.stdout


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
    fd 3 in, fd 4 out, NUL-separated JSON), so one browser opens many pages and clicks through
    them without a relaunch each."""

    def __init__(self, chromium, profile):
        to_chrome, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome = os.pipe()
        # Above the numbers the child takes (3 and 4) so that the redirections cannot clash.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_chrome, from_chrome)]
        os.close(to_chrome)
        os.close(from_chrome)
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{high[0]} 4>&{high[1]} {high[0]}<&- {high[1]}>&-', chromium,
             "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=high, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self.buffer, self.last_id = b"", 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def call(self, method, session=None, **params):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                if not select.select([self.from_chrome], [], [], 60)[0]:
                    raise RuntimeError(f"chromium did not answer {method} in 60 s")
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"chromium closed its pipe during {method}")
                self.buffer += chunk
            raw, _, self.buffer = self.buffer.partition(b"\0")
            reply = json.loads(raw)
            if reply.get("id") == self.last_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression):
        done = self.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True)
        if "exceptionDetails" in done:
            raise RuntimeError(f"{expression[:80]}: {done['exceptionDetails'].get('exception', {}).get('description')}")
        return done["result"].get("value")

    def open(self, url, ready, timeout=30):
        """Loads url afresh and waits until the expression `ready` is true; returns its value."""
        self.call("Page.navigate", self.session, url="about:blank")
        self.call("Page.navigate", self.session, url=url)
        end = time.time() + timeout
        while time.time() < end:
            value = self.evaluate(f"document.readyState === 'complete' && location.href === {json.dumps(url)} "
                                  f"&& ({ready})")
            if value:
                return value
            time.sleep(0.05)
        raise RuntimeError(f"{url[:100]}: not ready after {timeout} s ({ready})")

    def close(self):
        try:
            self.call("Browser.close")
            self.proc.wait(timeout=20)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)


# What a drawing shows, read from the page as a reader sees it: the offset printed on the log
# cell above each mark (matched by the columns' left edges), the badges in it, the text of
# the numbers; and the data-* attributes next to them.
READ_DRAWING = r"""
(panel) => {
  const st = document.querySelector(panel + " > .state");
  if (!st) return null;
  const num = (v) => (v === undefined || v === null || v === "" ? null : Number(v));
  const out = {step: num(st.dataset.step), now: num(st.dataset.now),
               head: st.querySelector(".state-head").textContent, topics: [], problems: [],
               groups: [...st.querySelectorAll("ul.groups > li")].map((li) => li.textContent),
               waiting: [...st.querySelectorAll("ul.waiting > li")].map((li) => li.textContent)};
  for (const sec of st.querySelectorAll("section.topic")) {
    const t = {name: sec.dataset.topic, partitions: num(sec.dataset.partitions),
               oldest: num(sec.dataset.oldest), end: num(sec.dataset.end), heading: sec.querySelector("h4").textContent,
               log: [], gone: [], next: null, lanes: {}, subs: []};
    const columns = new Map();
    for (const c of sec.querySelectorAll(".grid > .cell")) {
      const shown = Number(c.querySelector(".off").textContent);
      columns.set(Math.round(c.getBoundingClientRect().left), shown);
      if (c.classList.contains("next")) t.next = shown;
      else if (c.classList.contains("gone")) t.gone.push(shown);
      else t.log.push([shown, c.dataset.payload, c.querySelector(".payload").textContent]);
    }
    for (const m of sec.querySelectorAll(".grid > .mark")) {
      const at = columns.get(Math.round(m.getBoundingClientRect().left));
      const lane = t.lanes[m.dataset.sub] || (t.lanes[m.dataset.sub] = {committed: [], cursor: [], held: [], dead: []});
      if (at === undefined) {
        out.problems.push(`${t.name}: a mark of ${m.dataset.sub} is under no log cell`);
        continue;
      }
      const label = m.previousElementSibling;
      if (label && label.classList.contains("label") && label.firstChild.textContent !== m.dataset.sub) {
        out.problems.push(`${t.name}: the lane of ${m.dataset.sub} is labelled ${label.textContent}`);
      }
      if (at !== Number(m.dataset.offset)) {
        out.problems.push(`${t.name}: ${m.dataset.sub}'s mark data-offset=${m.dataset.offset} is under ${at}`);
      }
      if (m.querySelector(".badge.committed")) lane.committed.push(at);
      if (m.querySelector(".badge.cursor")) lane.cursor.push(at);
      const h = m.querySelector(".holder");
      if (h) lane.held.push([at, m.dataset.holder, num(m.dataset.deadline), h.textContent]);
      if (m.querySelector(".dead-mark")) lane.dead.push(at);
    }
    for (const li of sec.querySelectorAll("ul.numbers > li")) {
      t.subs.push({name: li.dataset.sub, kind: li.dataset.kind, text: li.querySelector(".counts").textContent,
                   retries: [...li.querySelectorAll(".retry")].map((r) => num(r.dataset.notBefore)),
                   dead: [...li.querySelectorAll("ul.dead-letters > li")].map((d) =>
                     [num(d.dataset.offset), num(d.dataset.attempts), d.dataset.reason, num(d.dataset.diedAt),
                      d.textContent])});
    }
    out.topics.push(t);
  }
  return out;
}
"""

STAT_WORDS = [("committed", "committed"), ("cursor", "cursor"), ("backlog", "backlog"),
              ("in flight", "in_flight"), ("delivered", "delivered"), ("redelivered", "redelivered"),
              ("confirmed", "confirmed"), ("dead-lettered", "dead_lettered"), ("skipped", "skipped"),
              ("filtered", "filtered"), ("redriven", "redriven"), ("purged", "purged")]
STAT_KEYS = [k for _, k in STAT_WORDS] + ["paused"]


def short(payload):
    """What a log cell shows of a payload (state_view.js says the same)."""
    return payload if len(payload) <= 9 else payload[:8] + "\u2026"


def seen_state(d):
    """A drawing read by READ_DRAWING, as a flat dict of what it shows; problems appended
    to d["problems"]."""
    out = {"now": d["now"], "topics": [t["name"] for t in d["topics"]], "waiting": d["waiting"]}
    problems = d["problems"]
    if str(d["now"]) not in d["head"]:
        problems.append(f"the heading {d['head']!r} does not show the clock {d['now']}")
    for g in d["groups"]:
        m = re.match(r"(.+) on (.+?)(?: \(push\))?, generation (\d+), members \[(.*?)\]; (.*)$", g)
        if not m:
            problems.append(f"a group line reads {g!r}")
            continue
        owners = [tuple(re.match(r"(.*): (\S+)", p).groups()) for p in m.group(5).split("; ")]
        owners = [(topic, "" if who == "nobody" else who) for topic, who in owners]
        owners = [(topic, re.sub(r" since gen \d+$", "", who)) for topic, who in owners]
        members = m.group(4).split(", ") if m.group(4) else []
        out[f"group:{m.group(2)}/{m.group(1)}"] = (int(m.group(3)), members, owners)
    for t in d["topics"]:
        name = t["name"]
        info = {"partitions": t["partitions"], "oldest": t["oldest"], "end": t["end"]}
        if t["end"] is not None and t["oldest"] is not None and t["partitions"] == 1:
            if f"keeps [{t['oldest']}, {t['end']})" not in t["heading"]:
                problems.append(f"{name}: the heading {t['heading']!r} does not say keeps [{t['oldest']}, {t['end']})")
            info["log"] = [(o, p) for o, p, _ in t["log"]]
            for o, p, shown in t["log"]:
                if shown != short(p or ""):
                    problems.append(f"{name}: the cell of offset {o} shows {shown!r} for the payload {p!r}")
            if t["next"] != t["end"]:
                problems.append(f"{name}: the next cell is at {t['next']}, the end is {t['end']}")
            kept = {o for o, _, _ in t["log"]}
            lo = min([o for o, _, _ in t["log"]] + t["gone"] + [t["end"]])
            if sorted(t["gone"]) != [o for o in range(lo, t["end"]) if o not in kept] or \
                    any(o >= t["oldest"] for o in t["gone"]):
                problems.append(f"{name}: cells drawn as gone {t['gone']}, the log keeps [{t['oldest']}, {t['end']})")
        out[f"topic:{name}"] = info
        for s in t["subs"]:
            key = f"{name}/{s['name']}"
            lane = t["lanes"].get(s["name"], {"committed": [], "cursor": [], "held": [], "dead": []})
            text = s["text"]
            stats = {}
            for word, k in STAT_WORDS:
                m = re.search(r"(?:^|, )" + re.escape(word) + r" (\d+)(?=,|$)", text)
                stats[k] = int(m.group(1)) if m else 0
            stats["paused"] = bool(re.search(r"(?:^|, )paused$", text))
            out[f"sub:{key}"] = stats
            out[f"kind:{key}"] = s["kind"]
            out[f"marks:{key}"] = {"committed": lane["committed"], "cursor": lane["cursor"]}
            out[f"held:{key}"] = [(o, who, deadline) for o, who, deadline, _ in lane["held"]]
            for o, who, deadline, shown in lane["held"]:
                if shown != f"{who}\u2264 {deadline}":
                    problems.append(f"{key}: the held mark at {o} reads {shown!r}, not {who} and {deadline}")
            out[f"dead:{key}"] = [(o, a, r, at) for o, a, r, at, _ in s["dead"]]
            for o, a, r, at, shown in s["dead"]:
                if not shown.startswith(f"{o} ") or f"{a} attempt" not in shown or r not in shown \
                        or f"at {at}" not in shown:
                    problems.append(f"{key}: the dead letter line {shown!r} does not read {o}, {a} attempts, "
                                    f"{r}, at {at}")
            out[f"deadmarks:{key}"] = sorted(lane["dead"])
            out[f"retries:{key}"] = s["retries"]
    return out


def json_state(j):
    """The WebAssembly model's state (playground_state()) as the same flat dict."""
    out = {"now": j["now"], "topics": [t["name"] for t in j["topics"]], "waiting": j["waiting_for_handler"]}
    for g in j["groups"]:
        out[f"group:{g['topic']}/{g['name']}"] = (g["generation"], g["members"],
                                                  [(p["topic"], p.get("owner", "")) for p in g["partitions"]])
    for t in j["topics"]:
        info = {"partitions": t["partitions"], "oldest": t.get("oldest"), "end": t.get("end")}
        if "end" in t and "oldest" in t and t["partitions"] == 1:
            info["log"] = [(c["offset"], c["payload"]) for c in t["log"]]
        out[f"topic:{t['name']}"] = info
        if "log" not in info:
            continue
        lo = min([t["oldest"], t["end"]] + [min(s["committed"], s["cursor"], *[h["offset"] for h in s["held"]])
                                            for s in t["subscriptions"]])
        for s in t["subscriptions"]:
            key = f"{t['name']}/{s['name']}"
            out[f"sub:{key}"] = {k: s[k] for k in STAT_KEYS}
            out[f"kind:{key}"] = s["kind"]
            out[f"marks:{key}"] = {"committed": [s["committed"]], "cursor": [s["cursor"]]}
            out[f"held:{key}"] = [(h["offset"], h["member"], h["deadline"]) for h in s["held"]]
            out[f"dead:{key}"] = [(d["offset"], d["attempts"], d["reason"], d["died_at"]) for d in s["dead"]]
            out[f"deadmarks:{key}"] = sorted({d["offset"] for d in s["dead"] if lo <= d["offset"] <= t["end"]})
            out[f"retries:{key}"] = s["retry_waits"]
    return out


def differences(expected, seen, label):
    """Every key where seen differs from expected; with label "native", only the keys the
    native model was asked about."""
    out = []
    for k in sorted(set(expected) | (set(seen) if label != "native" else set())):
        if k not in expected:
            out.append(f"{k}: drawn {seen[k]!r}, not in the {label} state")
        elif expected[k] != seen.get(k, "(not drawn)"):
            e, v = expected[k], seen.get(k, "(not drawn)")
            if isinstance(e, dict) and isinstance(v, dict):
                diff = [f"{f} {v.get(f, '(none)')!r} vs {e.get(f, '(none)')!r}" for f in sorted(set(e) | set(v))
                        if e.get(f, "(none)") != v.get(f, "(none)")]
                out.append(f"{k}: drawn vs {label}: " + "; ".join(diff))
            else:
                out.append(f"{k}: drawn {v!r}, {label} {e!r}")
    return out


# The text form's values (oplang/text.h): a bare word, or a quoted string with escapes. The
# strings here are the model's bytes, one character each (as the JSON carries them).
VALUE = r'"(?:\\.|[^"\\])*"|[A-Za-z0-9_.-]+'


def format_value(value):
    if value and re.fullmatch(r"[A-Za-z0-9_.-]+", value):
        return value
    out = ['"']
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif c in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[c])
        elif ord(c) < 0x20 or ord(c) >= 0x7f:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return "".join(out) + '"'


def unquote(token):
    if not token.startswith('"'):
        return token
    return re.sub(r'\\(x[0-9a-fA-F]{2}|.)', lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "x"
                  else {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), token[1:-1])


def native_outcomes(spec_trace, root, ops):
    """Runs ops (text-form lines) with spec-trace --model-only; returns each step's outcome
    (the lines under its heading, unindented)."""
    done = subprocess.run([spec_trace, "--model-only", "-"], input="\n".join(ops) + "\n", cwd=root,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"spec-trace --model-only exit {done.returncode}: {done.stderr.strip()[:300]}")
    steps = re.split(r"^\[\d+\] .*\n", done.stdout, flags=re.M)[1:]
    steps[-1] = re.sub(r"^model: \d+ steps\n\Z", "", steps[-1], flags=re.M)
    return ["\n".join(l[4:] for l in s.rstrip("\n").split("\n")) for s in steps]


def native_state(spec_trace, root, prefix, wasm):
    """What the native model says after the ops in prefix, asked about the topics,
    subscriptions and groups the WebAssembly state names (it checks the names too)."""
    probes, read = ["topics", "waiting_for_handler"], []
    for t in wasm["topics"]:
        name = format_value(t["name"])
        probes += [f"end_offset {name}", f"oldest_offset {name}", f"subscriptions {name}"]
        read.append(("topic", t))
        for s in t["subscriptions"]:
            probes += [f"stats {name} {format_value(s['name'])}", f"dead_letters {name} {format_value(s['name'])}"]
    for g in wasm["groups"]:
        probes.append(f"group_stats {format_value(g['topic'])} {format_value(g['name'])}")
    logs = [t for t in wasm["topics"] if t["partitions"] == 1 and "end" in t and "oldest" in t]
    taken = {s["name"] for t in logs for s in t["subscriptions"]}
    probe = next(f"site_probe{i}" for i in range(1000) if f"site_probe{i}" not in taken)
    for t in logs:
        if t["end"] > t["oldest"]:
            probes += [f"subscribe_pull {format_value(t['name'])} {probe} start=begin",
                       f"poll {format_value(t['name'])} {probe} site-reader max={t['end'] - t['oldest']}"]
    if logs:  # the clock: a time after now is refused (R28)
        probes += [f"offset_for_time {format_value(logs[0]['name'])} {wasm['now']}",
                   f"offset_for_time {format_value(logs[0]['name'])} {wasm['now'] + 1}"]
    answers = iter(native_outcomes(spec_trace, root, prefix + probes)[len(prefix):])
    names = lambda text: [unquote(v) for v in re.findall(VALUE, text[len("names "):])]
    out = {"topics": names(next(answers)), "waiting": names(next(answers))}
    for t in wasm["topics"]:
        key = t["name"]
        end, oldest, subs = next(answers), next(answers), next(answers)
        number = lambda text: int(text.split()[1]) if text.startswith("offset ") else None
        out[f"topic:{key}"] = {"partitions": t["partitions"], "oldest": number(oldest), "end": number(end)}
        # Every name subscriptions lists is drawn, and only push groups besides (R10: it lists
        # their members).
        listed = names(subs) if subs.startswith("names ") else []
        drawn = {s["name"]: s["kind"] for s in t["subscriptions"]}
        if not set(listed) <= set(drawn) or any(k != "push group" for n, k in drawn.items() if n not in listed):
            out[f"names:{key}"] = listed
        for s in t["subscriptions"]:
            sk = f"{key}/{s['name']}"
            stats, dead = next(answers), next(answers)
            values = dict(re.findall(r"(\w+)=(\d+)", stats))
            out[f"sub:{sk}"] = {k: int(values.get(k, 0)) for k in STAT_KEYS[:-1]}
            out[f"sub:{sk}"]["paused"] = stats.endswith(" paused")
            out[f"marks:{sk}"] = {"committed": [int(values.get("committed", -1))],
                                  "cursor": [int(values.get("cursor", -1))]}
            entry = re.compile(rf"(?:{VALUE})/(?:{VALUE}) (\d+) (?:{VALUE}) attempts=(\d+) "
                               rf"reason=({VALUE}) died_at=(-?\d+)")
            out[f"dead:{sk}"] = [(int(o), int(a), unquote(r), int(at)) for o, a, r, at in entry.findall(dead)]
    for g in wasm["groups"]:
        text = next(answers)
        m = re.match(r"group gen=(\d+) members=\[(.*?)\]", text)
        parts = re.findall(rf"; ({VALUE}) owner=({VALUE}) end=", text)
        out[f"group:{g['topic']}/{g['name']}"] = (
            int(m.group(1)) if m else None, [unquote(v) for v in re.findall(VALUE, m.group(2))] if m else None,
            [(unquote(p), unquote(o)) for p, o in parts])
    for t in logs:
        cells = []
        if t["end"] > t["oldest"]:
            next(answers)
            cells = [(int(o), unquote(p)) for o, p in re.findall(rf"(\d+) ({VALUE}) attempt=", next(answers))]
        out[f"topic:{t['name']}"]["log"] = cells
    if logs:
        at_now, after = next(answers), next(answers)
        if at_now.startswith("offset ") and after == "error invalid_argument":
            out["now"] = wasm["now"]
        else:
            out["now"] = f"not {wasm['now']}: offset_for_time at it says {at_now!r}, 1 ms after {after!r}"
    return out


def native_holders(spec_trace, root, prefix, wasm):
    """Each held message of the WebAssembly state, checked natively: its holder's ack one ms
    before the deadline is accepted, at the deadline it is late. Returns the flat dict's held
    entries for what the native model confirms."""
    out, since = {}, {}
    for g in wasm["groups"]:
        for p in g["partitions"]:
            since[(p["topic"], g["name"])] = p.get("since")
    for t in wasm["topics"]:
        for s in t["subscriptions"]:
            key = f"{t['name']}/{s['name']}"
            confirmed = []
            for h in s["held"]:
                gen = since.get((t["name"], s["name"]))
                ack = (f"ack {format_value(t['name'])} {format_value(s['name'])} {h['offset']} "
                       f"{format_value(h['member'])}" + (f" gen={gen}" if gen else ""))
                wait = h["deadline"] - wasm["now"]
                before = ["true"]  # a deadline already passed: only "late" can be asked
                if wait >= 1:
                    advance = [f"advance {wait - 1}"] if wait > 1 else []
                    before = native_outcomes(spec_trace, root, prefix + advance + [ack])[-1:]
                advance = [f"advance {wait}"] if wait > 0 else []
                at = native_outcomes(spec_trace, root, prefix + advance + [ack])[-1:]
                if before == ["true"] and at == ["false (late)"]:
                    confirmed.append((h["offset"], h["member"], h["deadline"]))
                else:
                    confirmed.append((h["offset"], f"native: before the deadline {before}, at it {at}", h["deadline"]))
            if s["kind"] in ("pull", "consumer group") and len(s["held"]) != s["in_flight"]:
                confirmed.append(("in_flight", s["in_flight"]))
            out[f"held:{key}"] = confirmed
    return out


class StateChecks:
    """The drawings of one browser, checked step by step against the WebAssembly model's JSON
    and the native model (asked once per script and step)."""

    def __init__(self, browser, spec_trace, root):
        self.browser, self.spec_trace, self.root = browser, spec_trace, root
        self.native = {}
        self.steps_checked = 0

    def expected(self, trace, n, wasm):
        ops = re.findall(r"^\[\d+\] (.*)$", trace, re.M)[:n]
        key = (tuple(ops), n)
        if key not in self.native:
            state = native_state(self.spec_trace, self.root, ops, wasm)
            state.update(native_holders(self.spec_trace, self.root, ops, wasm))
            self.native[key] = state
        return self.native[key]

    def check_page(self, where, trace_id, panel_id, trace, states):
        """Clicks every step of the trace in #trace_id and checks what #panel_id draws."""
        b = self.browser
        first = b.evaluate(f"({READ_DRAWING})('#{panel_id}')")
        if not first or first["step"] != len(states):
            fail(f"{where}: at first the drawing shows step {first and first['step']}, not the last, {len(states)}")
        bad = 0
        for n, wasm in enumerate(states, start=1):
            drawn = b.evaluate(f"document.querySelector('#{trace_id} span.step[data-step=\"{n}\"]').click(), "
                               f"({READ_DRAWING})('#{panel_id}')")
            if not drawn or drawn["step"] != n:
                fail(f"{where}: a click on step {n} draws step {drawn and drawn['step']}")
                bad += 1
                continue
            seen = seen_state(drawn)
            found = [f"{p}" for p in drawn["problems"]]
            found += differences(json_state(wasm), seen, "wasm")
            found += differences(self.expected(trace, n, wasm), seen, "native")
            for f in found[:6]:
                fail(f"{where}: after step {n}: {f}")
            bad += bool(found)
            self.steps_checked += 1
        return bad


def check_links(site):
    pages = [p for p in os.listdir(site) if p.endswith(".html")]
    doms = {p: parse(open(os.path.join(site, p), encoding="utf-8").read()) for p in pages}
    broken = 0
    for page, dom in doms.items():
        for key, link in dom.links:
            if re.match(r"^[a-z]+:", link):
                fail(f"{page}: {key}={link} leaves the site (no network at run time)")
                broken += 1
                continue
            path, _, anchor = link.partition("#")
            target = path or page
            if not os.path.exists(os.path.join(site, target)):
                fail(f"{page}: link to {link}: no such file")
                broken += 1
            elif anchor and target in doms and anchor not in doms[target].ids \
                    and not re.match(r"^(s|example)=", anchor):
                fail(f"{page}: link to {link}: no #{anchor} in {target}")
                broken += 1
    links = sum(len(d.links) for d in doms.values())
    print(f"links: {links} in {len(pages)} pages, {broken} broken")


def check_guides(root, site):
    """The README and every docs/*.md page are pages of the site, linked from its index, each
    with every heading of its file."""
    index = parse(open(os.path.join(site, "index.html"), encoding="utf-8").read())
    linked = {link for _, link in index.links}
    paths = ["README.md"] + ["docs/" + f for f in sorted(os.listdir(os.path.join(root, "docs")))
                             if f.endswith(".md")]
    for path in paths:
        page = "guide-" + os.path.splitext(os.path.basename(path))[0] + ".html"
        if page not in linked:
            fail(f"index.html does not link {page}, the page of {path}")
            continue
        dom = parse(open(os.path.join(site, page), encoding="utf-8").read())
        for line in open(os.path.join(root, path), encoding="utf-8").read().split("```")[0::2]:
            for heading in re.findall(r"^#{2,4} (.*)$", line, re.M):
                anchor = re.sub(r"[^a-z0-9 _-]", "", re.sub(r"[`*]", "", heading).lower()).replace(" ", "-")
                if anchor not in dom.ids:
                    fail(f"{page}: no heading #{anchor} ({path}: {heading!r})")
    print(f"guides: {len(paths)} pages (README.md and docs/*.md), linked from the index")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--spec-trace", required=True)
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    chromium = os.environ.get("CHROMIUM_BIN", "chromium")
    if not shutil.which(chromium):
        sys.exit(f"site test: {chromium} not found: apt-get install -y chromium (scripts/test installs it)")
    if not os.access(args.spec_trace, os.X_OK):
        sys.exit(f"site test: {args.spec_trace} not built: cmake --build --preset default --target spec-trace")
    if not args.no_build:
        built = subprocess.run([os.path.join(args.root, "scripts", "spec-site"), args.out],
                               capture_output=True, text=True, check=False)
        if built.returncode != 0:
            sys.exit("site test: scripts/spec-site failed: "
                     + (built.stderr.strip().splitlines() or ["(no message)"])[-1])
    site = os.path.abspath(args.out)
    profile = tempfile.mkdtemp(prefix="spec-site-chromium-")
    try:
        run_checks(args, site, chromium, profile)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    print(f"site test: {len(failures)} failures")
    sys.exit(1 if failures else 0)


def run_checks(args, site, chromium, profile):
    spec = open(os.path.join(args.root, "SPEC.md"), encoding="utf-8").read()
    for n in sorted({int(n) for n in re.findall(r"^\*\*R(\d+) ", spec, re.M)}):
        if not os.path.exists(os.path.join(site, f"rule-R{n}.html")):
            fail(f"rule R{n}: no page rule-R{n}.html")
    check_links(site)
    check_guides(args.root, site)

    playground = "file://" + os.path.join(site, "playground.html")
    examples = sorted(os.path.relpath(os.path.join(d, f), args.root)
                      for d, _, fs in os.walk(os.path.join(args.root, "examples"))
                      for f in fs if f.endswith(".script"))
    texts = {path: open(os.path.join(args.root, path), encoding="utf-8").read() for path in examples}
    states = wasm_states(args.root, site, [texts[p] for p in examples])
    traces = {}
    browser = Browser(chromium, profile)
    checks = StateChecks(browser, args.spec_trace, args.root)
    try:
        for path, wasm in zip(examples, states):
            text = texts[path]
            native = subprocess.run([args.spec_trace, "--model-only", path], cwd=args.root,
                                    capture_output=True, text=True, check=False)
            if native.returncode != 0:
                fail(f"{path}: spec-trace --model-only exit {native.returncode}: {native.stderr.strip()}")
                continue
            traces[path] = native.stdout
            state = browser.open(playground + "#s=" + urllib.parse.quote(text, safe=""),
                                 "['done', 'error', 'refused', 'failed'].includes(document.body.dataset.state) "
                                 "&& document.body.dataset.state")
            shown = browser.evaluate("document.getElementById('trace').textContent")
            if state != "done" or shown != native.stdout:
                fail(f"{path}: the playground shows (state {state}) {len(shown)} bytes, spec-trace "
                     f"{len(native.stdout)}: {first_difference(shown, native.stdout)}")
                continue
            name = os.path.splitext(os.path.basename(path))[0]
            page = open(os.path.join(site, f"example-{name}.html"), encoding="utf-8").read()
            pre = re.search(r'<pre class="trace">(.*?)</pre>', page, re.S)
            if not pre or html.unescape(pre.group(1)) != native.stdout:
                fail(f"{path}: example-{name}.html does not show spec-trace's trace")
            bad = checks.check_page(f"{path} in the playground", "trace", "state", native.stdout, wasm["states"])
            print(f"{path}: playground and page == spec-trace --model-only ({native.stdout.count(chr(10))} lines); "
                  f"the state drawn after each of {len(wasm['states'])} steps == the model's"
                  + (f" except after {bad}" if bad else ""))

        # Each rule page that draws an example: its trace, and its drawing step by step.
        by_name = {os.path.splitext(os.path.basename(p))[0]: p for p in examples}
        drawn = 0
        for page in sorted(p for p in os.listdir(site) if p.startswith("rule-") and p.endswith(".html")):
            source = open(os.path.join(site, page), encoding="utf-8").read()
            m = re.search(r"<h2>An example: ([\w.-]+)</h2>", source)
            check_rule_opening(page, source, spec, m)
            if not m:
                continue
            path = by_name.get(m.group(1))
            if path not in traces:
                fail(f"{page}: draws the example {m.group(1)}, which the playground check did not run")
                continue
            browser.open("file://" + os.path.join(site, page), "!!document.querySelector('#example-state .state')")
            shown = browser.evaluate("document.getElementById('example-trace').textContent")
            if shown != traces[path]:
                fail(f"{page}: the example's trace is not spec-trace's: {first_difference(shown, traces[path])}")
            bad = checks.check_page(page, "example-trace", "example-state", traces[path],
                                    states[examples.index(path)]["states"])
            drawn += 1
            if bad:
                print(f"{page}: {path}'s drawing differs after {bad} steps")
        print(f"rule pages: {drawn} draw an example; the state after each step checked "
              f"({checks.steps_checked} drawings in all, {len(checks.native)} native states asked)")
    finally:
        browser.close()

    # A script that does not parse: the error names the line and column spec-trace names.
    bad = "create_topic t\npublish t\n"
    native = subprocess.run([args.spec_trace, "--model-only", "-"], input=bad, capture_output=True,
                            text=True, check=False)
    where = re.match(r"<stdin>:(\d+):(\d+): (.*)", native.stderr.strip())
    dom = parse(chromium_dom(chromium, playground + "#s=" + urllib.parse.quote(bad, safe=""), profile))
    shown = dom.text.get("error", "")
    state = dom.attrs.get("body", {}).get("data-state")
    if not where or state != "error" or f"script:{where.group(1)}:{where.group(2)}: {where.group(3)}" not in shown \
            or f"line {where.group(1)}, column {where.group(2)}" not in shown:
        fail(f"parse error: the page (state {state}) shows {shown!r}, spec-trace says {native.stderr.strip()!r}")
    else:
        print(f"parse error: the page points at line {where.group(1)}, column {where.group(2)} like spec-trace")

    # Over the limits (2,000 lines; 64 KiB): refused with a message, nothing run.
    for label, big in (("2,001 lines", "topics\n" * 2001), ("65 KiB", "# " + "x" * (65 * 1024) + "\n")):
        dom = parse(chromium_dom(chromium, playground + "#s=" + urllib.parse.quote(big, safe=""), profile))
        state = dom.attrs.get("body", {}).get("data-state")
        if state != "refused" or "script too large" not in dom.text.get("error", ""):
            fail(f"a script of {label}: state {state}, error {dom.text.get('error', '')[:200]!r}")
        else:
            print(f"a script of {label}: refused with a message")
    # The WebAssembly entry refuses them too (the page checks first, so ask it directly).
    direct = subprocess.run(["node", os.path.join(args.root, "site", "run_traces.js"),
                             os.path.join(site, "playground-module.js")], capture_output=True, text=True,
                            input=json.dumps(["topics\n" * 2001, "#" * (65 * 1024)]), check=False)
    statuses = [r["status"] for r in json.loads(direct.stdout or "[]")]
    if statuses != [2, 2]:
        fail(f"the WebAssembly entry does not refuse over-large scripts: statuses {statuses} {direct.stderr[-300:]}")
    else:
        print("over-large scripts: refused by the WebAssembly entry too")


def check_rule_opening(page, source, spec, example):
    """A numbered rule's page opens with its one sentence from SPEC's "The rules in one
    sentence", then the example if any, then the rule's full text."""
    number = re.match(r"rule-R(\d+)\.html$", page)
    if not number:
        return
    main = source.split("<main>", 1)[-1]
    summary = re.match(r'\s*<h1>[^<]*</h1>\s*<p class="summary">(.*?)</p>', main, re.S)
    full = main.find('<section class="rule">')
    if not summary or full < 0 or (example and not summary.end() < main.find(example.group(0)) < full):
        fail(f"{page}: does not open with a summary, then the example, then the rule's text")
        return
    said = " ".join(html.unescape(re.sub(r"<[^>]+>", "", summary.group(1))).split())
    row = re.search(r"^\| R" + number.group(1) + r" \| (.*) \|$", spec.split("## The rules in one sentence")[-1], re.M)
    words = " ".join(re.sub(r"\*\*|`", "", row.group(1) if row else "").split())
    if not row or said != words or not said.endswith(".") or said.count(". ") > 0:
        fail(f"{page}: the summary {said[:80]!r} is not the rule's one sentence in SPEC.md")


def wasm_states(root, site, texts):
    """Each script's trace and states from the site's WebAssembly module under node
    (run_traces.js: the calls the pages make)."""
    done = subprocess.run(["node", os.path.join(root, "site", "run_traces.js"),
                           os.path.join(site, "playground-module.js")], input=json.dumps(texts),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit("site test: run_traces.js failed: " + done.stderr.strip()[-300:])
    return json.loads(done.stdout)


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: page {x!r} vs {y!r}"
    return "one is a prefix of the other" if a != b else "same"


if __name__ == "__main__":
    main()
