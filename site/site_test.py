"""The spec site in a real browser: builds it (scripts/spec-site), then opens it from the file
system in headless Chromium and checks that
  - the playground shows, for every example script, byte for byte what the native
    `spec-trace --model-only` prints (the script passed through the page's #s= address),
  - each example's page shows that same trace (computed at generation time by the
    WebAssembly model under node),
  - a script that does not parse shows the error with its line and column (as spec-trace
    reports them), and an over-large script is refused with a message,
  - every SPEC rule has its page, and every link and anchor inside the site resolves.
Prints one line per failure and exits 1 on any; one clear line if a tool is missing.
Usage: site_test.py --root ROOT --out SITE_DIR --spec-trace PATH [--no-build]"""

import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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

    playground = "file://" + os.path.join(site, "playground.html")
    examples = sorted(os.path.relpath(os.path.join(d, f), args.root)
                      for d, _, fs in os.walk(os.path.join(args.root, "examples"))
                      for f in fs if f.endswith(".script"))
    for path in examples:
        text = open(os.path.join(args.root, path), encoding="utf-8").read()
        native = subprocess.run([args.spec_trace, "--model-only", path], cwd=args.root,
                                capture_output=True, text=True, check=False)
        if native.returncode != 0:
            fail(f"{path}: spec-trace --model-only exit {native.returncode}: {native.stderr.strip()}")
            continue
        dom = parse(chromium_dom(chromium, playground + "#s=" + urllib.parse.quote(text, safe=""), profile))
        state = dom.attrs.get("body", {}).get("data-state")
        shown = dom.text.get("trace", "")
        if state != "done" or shown != native.stdout:
            fail(f"{path}: the playground shows (state {state}) {len(shown)} bytes, spec-trace "
                 f"{len(native.stdout)}: {first_difference(shown, native.stdout)}")
        name = os.path.splitext(os.path.basename(path))[0]
        page = open(os.path.join(site, f"example-{name}.html"), encoding="utf-8").read()
        pre = re.search(r'<pre class="trace">(.*?)</pre>', page, re.S)
        if not pre or html.unescape(pre.group(1)) != native.stdout:
            fail(f"{path}: example-{name}.html does not show spec-trace's trace")
        print(f"{path}: playground and page == spec-trace --model-only ({native.stdout.count(chr(10))} lines)")

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


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: page {x!r} vs {y!r}"
    return "one is a prefix of the other" if a != b else "same"


if __name__ == "__main__":
    main()
