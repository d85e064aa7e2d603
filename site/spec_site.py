"""Writes the spec site: index, one page per SPEC rule, the operation language, the planted
bugs, the examples with their traces, the playground, and a page per source file the others
link to (with line anchors). Plain HTML and CSS; the playground's JavaScript runs the model
compiled to WebAssembly. Nothing is fetched at run time. Called by scripts/spec-site."""

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import sources as S  # noqa: E402 (after the line above)

HERE = os.path.dirname(os.path.abspath(__file__))
NAV = [("index.html", "Rules"), ("oplang.html", "Operation language"), ("bugs.html", "Planted bugs"),
       ("examples.html", "Examples"), ("playground.html", "Playground")]


class Site:
    def __init__(self, root, out):
        self.root, self.out = root, out
        self.linked = set()  # source files some page links to: each gets a page
        self.warnings = []

    def write(self, name, title, body, scripts=()):
        nav = " ".join(f'<a href="{h}">{t}</a>' for h, t in NAV)
        tags = "".join(f'<script src="{s}"></script>' for s in scripts)
        page = (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<title>{html.escape(title)}</title><link rel="stylesheet" href="style.css"></head>\n'
                f'<body><header><a class="home" href="index.html">atleastonce spec</a> <nav>{nav}</nav>'
                f'</header>\n<main>\n<h1>{html.escape(title)}</h1>\n{body}\n</main>{tags}</body></html>\n')
        with open(os.path.join(self.out, name), "w", encoding="utf-8") as f:
            f.write(page)

    def src(self, path, line=None, text=None):
        """A link to a source file's page (at a line)."""
        self.linked.add(path)
        href = source_page(path) + (f"#L{line}" if line else "")
        label = text if text is not None else path + (f":{line}" if line else "")
        return f'<a href="{href}">{html.escape(label)}</a>'


def source_page(path):
    return "src-" + re.sub(r"[^A-Za-z0-9_.-]", "-", path) + ".html"


def inline(text):
    """Markdown inline: `code`, **bold**, [text](target) as text, R<n> as links to rules."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part, quote=False)
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", part)
        part = re.sub(r"\bR(\d+)\b", r'<a href="rule-R\1.html">R\1</a>', part)
        out.append(part)
    return "".join(out)


def markdown(text):
    """Paragraphs, fenced code and `- ` lists: all SPEC's rules use."""
    out = []
    for chunk in re.split(r"\n\s*\n", text.strip()):
        if chunk.startswith("```"):
            out.append("<pre>" + html.escape("\n".join(chunk.splitlines()[1:-1])) + "</pre>")
        elif chunk.lstrip().startswith("- "):
            items = re.split(r"\n\s*- ", "\n" + chunk.strip()[2:])
            out.append("<ul>" + "".join(f"<li>{inline(i.strip())}</li>" for i in items if i.strip()) + "</ul>")
        else:
            out.append(f"<p>{inline(chunk)}</p>")
    return "\n".join(out)


def code_block(code, first, anchors=False):
    """Source lines with their numbers (each an anchor #L<n> on a source file's own page)."""
    ids = [f' id="L{first + i}"' if anchors else "" for i in range(len(code.splitlines()))]
    rows = "".join(f'<span class="ln"{ids[i]}>{first + i}</span>{html.escape(l)}\n'
                   for i, l in enumerate(code.splitlines()))
    return f'<pre class="code">{rows}</pre>'


def first_sentence(text):
    """A rule's first sentence as SPEC.md words it, without its bold heading: the summary a
    rule's page opens with. A sentence ends at a period outside `code` followed by a space and
    a word that does not start in lower case; not after "e.g" and the like, nor at a range's two
    dots (`name-0` .. `name-3`)."""
    body = re.sub(r"^\*\*R\d+ [^*]+?\*\*\s*", "", text.strip())
    in_code = False
    for i, c in enumerate(body):
        if c == "`":
            in_code = not in_code
        if c != "." or in_code or (i + 1 < len(body) and not body[i + 1].isspace()):
            continue
        if re.search(r"(\b(e\.g|i\.e|etc|vs|cf)|(^|[^.])\.)$", body[:i]):
            continue  # an abbreviation, or the second dot of "a .. b"
        following = body[i + 1:].lstrip()[:1]
        if not following or not following.islower():
            return " ".join(body[:i + 1].split())
    return " ".join(body.split())


def stepped_trace(ex, element_id):
    """An example's trace as the playground shows it, each step a span.step[data-step=N] that a
    click selects (state_view.js); the text is the trace's, byte for byte."""
    out, current = [], None
    for line in ex.trace["output"].splitlines(keepends=True):
        m = re.match(r"\[(\d+)\] ", line)
        if m or not line.startswith(" "):
            if current is not None:
                out.append("</span>")
            current = m.group(1) if m else None
            if m:
                out.append(f'<span class="step" data-step="{current}" tabindex="0" role="button" '
                           f'title="show the state after step {current}">')
        out.append(html.escape(line))
    if current is not None:
        out.append("</span>")
    return f'<pre class="trace steps" id="{element_id}">{"".join(out)}</pre>'


def drawn_example(ex):
    """An example's trace with the state after each step drawn beside it (the last step's
    first; a click on a step draws that one), as the playground draws it."""
    states = json.dumps(ex.trace["states"], separators=(",", ":")).replace("</", "<\\/")
    return (f'<div class="run">{stepped_trace(ex, "example-trace")}'
            f'<div id="example-state" class="state-panel" aria-live="polite">'
            f'<noscript><p>The drawing needs JavaScript; the trace is the model\'s.</p></noscript></div></div>'
            f'<script>window.EXAMPLE_STATES = {states};</script>')


def trace_html(ex):
    t = ex.trace
    cls = "trace" if t["status"] == 0 else "error"
    return f'<pre class="{cls}">{html.escape(t["output"])}</pre>'


def run_traces(playground, examples):
    """Every example through the playground's WebAssembly module under node: the traces the
    pages show are the ones the browser computes."""
    runner = os.path.join(HERE, "run_traces.js")
    payload = json.dumps([e.text for e in examples])
    done = subprocess.run(["node", runner, playground], input=payload, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        sys.exit("spec-site: running the examples on the WebAssembly model failed:\n"
                 + "\n".join(l[:300] for l in done.stderr.splitlines()[-12:]))
    for ex, result in zip(examples, json.loads(done.stdout)):
        ex.trace = result


def tests_section(site, cell, tests):
    """The table's tests cell as SPEC words it, then each named test with its place."""
    items, suite = [], None
    for token in re.findall(r"`([^`]+)`", cell):
        if re.match(r"^[A-Z][\w*]*(\.[\w*<>]*)?$", token):
            if "." in token:
                suite = token.split(".")[0]
            elif suite and not S.match_tests(token, tests):
                token = f"{suite}.{token}"  # `Suite.Step3_*`..`Step7_*`
            pattern = re.sub(r"<\w+>", "*", token)
            found = S.match_tests(pattern, tests)
            if not found:
                site.warnings.append(f"SPEC names {token}, no test of that name found")
                items.append(f"<li><code>{html.escape(token)}</code>: <em>no test of that name found</em></li>")
                continue
            links = ", ".join(site.src(t.path, t.line, t.name) for t in found[:40])
            more = f" and {len(found) - 40} more" if len(found) > 40 else ""
            items.append(f"<li><code>{html.escape(token)}</code>: {links}{more}</li>")
        elif token.endswith("_fuzzer"):
            path = f"fuzz/{token[:-len('_fuzzer')]}_fuzzer.cpp"
            if os.path.exists(os.path.join(site.root, path)):
                items.append(f"<li>{site.src(path, None, token)} (libFuzzer target)</li>")
    for corner in re.findall(r'"([^"]+)"', cell):
        hit = find_string(site.root, f'"{corner}"', ("properties",))
        where = site.src(hit[0], hit[1]) if hit else "<em>not found in properties/</em>"
        items.append(f"<li>corner <q>{html.escape(corner)}</q> reached by the random sequences: {where}</li>")
    return f"<p>{inline(cell)}</p><ul class=\"tests\">{''.join(items)}</ul>" if cell else "<p>(not in SPEC's table)</p>"


def find_string(root, needle, dirs):
    for d in dirs:
        for path in S.walk(os.path.join(root, d), (".cpp", ".h")):
            lines = S.read(root, os.path.join(d, path)).splitlines()
            for i, line in enumerate(lines):
                if needle in line:
                    return os.path.join(d, path), i + 1
    return None


def model_section(site, cell):
    parts = [f"<p>{inline(cell)}</p>"] if cell else ["<p>(not in SPEC's table)</p>"]
    seen = set()
    for name in re.findall(r"`([^`]+)`", cell):
        for d in S.find_definitions(site.root, name):
            if (d.path, d.first) in seen:
                continue
            seen.add((d.path, d.first))
            parts.append(f'<h3><code>{html.escape(name)}</code> in {site.src(d.path, d.first)}</h3>'
                         + code_block(d.code, d.first))
    return "\n".join(parts)


def rule_page(site, rule, tests, examples, catalog):
    mine = [e for e in examples if rule.number and rule.number in e.rules]
    body, scripts = [], ()
    if rule.text:
        body.append(f'<p class="summary">{inline(rule.summary or first_sentence(rule.text))}</p>')
    shown = next((e for e in mine if e.trace.get("status") == 0 and e.trace.get("states")), None)
    if shown:
        body.append(f'<h2>An example: {html.escape(shown.name)}</h2>'
                    f'<p>{site.src(shown.path)} on the model, step by step. The state after the last '
                    "step is drawn: each log as a row of cells, under it one lane per subscription "
                    "with its committed position, its cursor, what it holds (holder, deadline) and its "
                    "dead letters. Click a step to see the state after it "
                    f'(<a href="playground.html#example={shown.name}">run it in the playground</a>).</p>'
                    + drawn_example(shown))
        scripts = ("state_view.js", "rule.js")
    if rule.text:
        body.append(f'<h2>The rule</h2><section class="rule">{markdown(rule.text)}</section>')
    body.append("<h2>Where the model states it</h2>" + model_section(site, rule.model_cell))
    body.append("<h2>Tests and properties that check it</h2>" + tests_section(site, rule.tests_cell, tests))
    body.append('<p class="note">Every rule is also checked on random sequences by the broker-versus-model '
                "state machine (" + ", ".join(site.src(t.path, t.line, t.name) for t in
                                              S.match_tests("BrokerMatchesModel.*", tests)) + ") and the "
                + site.src("fuzz/ops_fuzzer.cpp", None, "ops_fuzzer") + ".</p>")
    bugs = [b for b in catalog if rule.number and rule.number in b["rules"]]
    if bugs:
        body.append("<h2>Planted bugs that break it</h2><ul>" + "".join(
            f'<li><a href="bugs.html#{b["name"]}">{b["name"]}</a>: {html.escape(b["mistake"])}</li>'
            for b in bugs) + "</ul>")
    body.append("<h2>Examples</h2>")
    if not mine:
        body.append("<p>No example script names this rule.</p>")
    for ex in mine:
        body.append(f'<details><summary><a href="example-{ex.name}.html">{ex.path}</a> and its trace '
                    f'(<a href="playground.html#example={ex.name}">run it</a>)</summary>'
                    f'<pre class="script">{html.escape(ex.text)}</pre>{trace_html(ex)}</details>')
    title = f"R{rule.number} {rule.title}" if rule.number else rule.title
    site.write(rule.slug + ".html", title, "\n".join(body), scripts=scripts)


def guide_slug(path):
    """The site page of a guide: README.md is guide-README.html, docs/x.md guide-x.html."""
    return "guide-" + os.path.splitext(os.path.basename(path))[0] + ".html"


def heading_id(text):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*]", "", text).lower()
    return re.sub(r"[^a-z0-9 _-]", "", text).replace(" ", "-")


def guide_code(text):
    """inline() without links: `code` and **bold**."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
        else:
            out.append(re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(part, quote=False)))
    return "".join(out)


def guide_inline(site, text, here):
    """A guide's inline markdown with its links kept: to another guide, that guide's page; to
    a file of the tree, its source page; to a heading, its anchor; anything else as text."""
    out = []
    for j, bit in enumerate(re.split(r"(\[[^\]]+\]\([^)\s]+\))", text)):
        if j % 2 == 0:
            out.append(guide_code(bit))
            continue
        label, target = re.match(r"\[([^\]]+)\]\(([^)\s]+)\)", bit).groups()
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(here), path)) if path else ""
        if not path:
            out.append(f'<a href="#{html.escape(anchor)}">{guide_code(label)}</a>')
        elif resolved == "README.md" or (resolved.startswith("docs/") and resolved.endswith(".md")):
            href = guide_slug(resolved) + (f"#{anchor}" if anchor else "")
            out.append(f'<a href="{html.escape(href)}">{guide_code(label)}</a>')
        elif os.path.isfile(os.path.join(site.root, resolved)) and not resolved.endswith(".png"):
            site.linked.add(resolved)
            out.append(f'<a href="{source_page(resolved)}">{guide_code(label)}</a>')
        else:
            out.append(guide_code(label))
    return "".join(out)


def guide_markdown(site, text, here):
    """A guide's markdown: headings, fenced code (blank lines inside too), tables, `- ` lists
    and paragraphs."""
    out, para, lines, i = [], [], text.splitlines(), 0

    def flush():
        if para:
            out.append(f"<p>{guide_inline(site, ' '.join(para), here)}</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + html.escape("\n".join(lines[i + 1:j])) + "</pre>")
            i = j + 1
            continue
        if m := re.match(r"^(#{1,4}) (.*)", line):
            flush()
            level = min(len(m.group(1)) + 1, 4)  # the page's own title is the h1
            out.append(f'<h{level} id="{heading_id(m.group(2))}">'
                       f"{guide_inline(site, m.group(2), here)}</h{level}>")
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = S.split_row(lines[i])
                if not all(re.fullmatch(r":?-+:?", c.strip()) for c in cells):
                    tag = "th" if not rows else "td"
                    rows.append("<tr>" + "".join(f"<{tag}>{guide_inline(site, c.strip(), here)}</{tag}>"
                                                 for c in cells) + "</tr>")
                i += 1
            out.append("<table>" + "".join(rows) + "</table>")
            continue
        elif re.match(r"^\s*[-*] ", line):
            flush()
            items = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("```"):
                if re.match(r"^\s*[-*] ", lines[i]):
                    items.append(re.sub(r"^\s*[-*] ", "", lines[i]))
                else:
                    items[-1] += " " + lines[i].strip()
                i += 1
            out.append("<ul>" + "".join(f"<li>{guide_inline(site, t, here)}</li>" for t in items) + "</ul>")
            continue
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


def guide_pages(site):
    """README.md and every docs/*.md as pages of the site; returns (page, title) in order."""
    paths = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(site.root, "docs"))
                                   if f.endswith(".md"))
    made = []
    for path in paths:
        text = S.read(site.root, path)
        title = re.match(r"^# (.*)", text).group(1) if text.startswith("# ") else path
        body = text.split("\n", 1)[1] if text.startswith("# ") else text
        site.write(guide_slug(path), title, f"<p class=\"from\">{site.src(path, None, path)}</p>"
                   + guide_markdown(site, body, path))
        made.append((guide_slug(path), title))
    return made


def index_page(site, rules, others, examples, guides=()):
    rows = "".join(f'<li><a href="{r.slug}.html">R{r.number} {html.escape(r.title)}</a></li>' for r in rules)
    extra = "".join(f'<li><a href="{r.slug}.html">{html.escape(r.title)}</a></li>' for r in others)
    body = (f"<p>The at-least-once contract of the broker, as {site.src('SPEC.md', None, 'SPEC.md')} states it "
            "and the reference model (<code>model/</code>) carries it. Each rule's page shows the model's "
            "source that states it, the tests that check it and the example scripts that exercise it, "
            "with their traces. The <a href=\"playground.html\">playground</a> runs the model in this page.</p>"
            f'<h2>Rules</h2><ol class="rules">{rows}</ol>'
            f"<h2>Also in SPEC's table</h2><ul>{extra}</ul>"
            '<h2>More</h2><ul><li><a href="oplang.html">The operation language</a>: every op, its '
            'arguments, its text form</li><li><a href="bugs.html">The planted-bug catalog</a>: which rule '
            'each bug breaks, which suite catches it</li><li><a href="examples.html">The example '
            f"scripts</a> ({len(examples)}) with their traces</li></ul>")
    if guides:
        items = "".join(f'<li><a href="{page}">{html.escape(title)}</a></li>' for page, title in guides)
        body += f'<h2>Guides</h2><ul class="guides">{items}</ul>'
    site.write("index.html", "The at-least-once contract", body)


def oplang_page(site, grammar, ops):
    rows = "".join(
        f'<tr id="{o["keyword"]}"><td><code>{o["keyword"]}</code><br>'
        f'{site.src("oplang/include/oplang/ops.h", o["line"], o["name"])}</td>'
        f'<td><code>{html.escape(o["form"])}</code></td><td>{inline(o["doc"])}</td>'
        f'<td>{"<br>".join("<code>" + html.escape(f) + "</code>" for f in o["fields"]) or "none"}</td></tr>'
        for o in ops)
    body = (f"<p>One vocabulary of operations ({site.src('oplang/include/oplang/ops.h')}) with a text form "
            f"({site.src('oplang/include/oplang/text.h')}): one op per line, <code>#</code> starts a comment. "
            "Scripts run on the model (here, and in the playground) and on the broker (<code>spec-trace</code>).</p>"
            f"<h2>Every op</h2><table><tr><th>op</th><th>text form</th><th>what it is</th>"
            f"<th>arguments (ops.h)</th></tr>{rows}</table>"
            f"<h2>The text form (text.h)</h2><pre>{html.escape(grammar)}</pre>")
    site.write("oplang.html", "The operation language", body)


def bugs_page(site, catalog, tests, examples, rules):
    rows = []
    for b in catalog:
        suites = []
        via = set()
        for spec in b["suites"]:
            found = S.suite_tests(spec, tests, examples)
            if found and isinstance(found[0], S.Example):
                suites.append(f'<a href="example-{found[0].name}.html">{html.escape(spec)}</a>')
                via |= found[0].rules
            elif found:
                suites.append(site.src(found[0].path, found[0].line, spec))
                names = {t.name for t in found}
                via |= {r.number for r in rules
                        if any(S.fnmatch.fnmatchcase(n, re.sub(r"<\w+>", "*", p) if "." in p else p + ".*")
                               for p in re.findall(r"`([A-Z][\w*<>]*(?:\.[\w*<>]*)?)`", r.tests_cell)
                               for n in names)}
            else:
                suites.append(f"<code>{html.escape(spec)}</code>")
        named = ", ".join(f'<a href="rule-R{n}.html">R{n}</a>' for n in b["rules"]) or "—"
        checked = ", ".join(f'<a href="rule-R{n}.html">R{n}</a>' for n in sorted(via - set(b["rules"])))
        patch = site.src(b["patch"], None, "patch") if b["patch"] else "(no patch)"
        rows.append(f'<tr id="{b["name"]}"><td><code>{b["name"]}</code><br>{patch}</td><td>{b["kind"]}</td>'
                    f'<td>{html.escape(b["mistake"])}</td><td>{named}</td><td>{checked or "—"}</td>'
                    f'<td>{"<br>".join(suites)}</td></tr>')
    body = (f"<p>{len(catalog)} planted bugs ({site.src('mutants/catalog.tsv')}, "
            f"{site.src('mutants/README.md', None, 'how they are planted')}): each is a patch to the broker, "
            "and the suites named must catch it. <em>Breaks</em>: the rules SPEC's table, the patch or the "
            "mistake names; <em>caught by tests of</em>: other rules whose tests (SPEC's table) are among "
            "the suites that catch it.</p><table class=\"bugs\"><tr><th>bug</th><th>kind</th><th>mistake</th><th>breaks</th>"
            f"<th>caught by tests of</th><th>suites that catch it, fastest first</th></tr>{''.join(rows)}</table>")
    site.write("bugs.html", "The planted-bug catalog", body)


def example_pages(site, examples):
    items = []
    for ex in examples:
        rules = ", ".join(f'<a href="rule-R{n}.html">R{n}</a>' for n in sorted(ex.rules)) or "none named"
        body = (f"<p>{site.src(ex.path)}; rules it names: {rules}. "
                f'<a href="playground.html#example={ex.name}">Open it in the playground</a>.</p>'
                f"<h2>Script</h2>{code_block(ex.text.rstrip(), 1)}"
                f"<h2>The model's trace</h2><p>As <code>spec-trace --model-only {ex.path}</code> prints it "
                f"(computed by the playground's WebAssembly model).</p>{trace_html(ex)}")
        site.write(f"example-{ex.name}.html", ex.path, body)
        items.append(f'<li><a href="example-{ex.name}.html">{ex.path}</a> ({rules})</li>')
    body = (f"<p>Every script under <code>examples/</code>; CTest runs each on the model and the broker "
            f"(<code>spec-trace</code>). The concurrent programs (<code>examples/concurrent/*.program</code>) "
            f"need threads and are not here.</p><ul>{''.join(items)}</ul>")
    site.write("examples.html", "Example scripts", body)


def playground_page(site, examples):
    with open(os.path.join(site.out, "examples.js"), "w", encoding="utf-8") as f:
        f.write("// The example scripts, one click away in the playground (generated by scripts/spec-site).\n"
                "window.EXAMPLES = " + json.dumps({e.name: e.text for e in examples}, indent=1) + ";\n")
    buttons = " ".join(f'<a class="example" href="#example={e.name}">{e.name}</a>' for e in examples)
    body = f"""<p class="note">Only the reference model runs here (compiled to WebAssembly, no broker, no
threads): it shows what the contract says each step returns, exactly as
<code>spec-trace --model-only SCRIPT</code> prints it. The operation language is on
<a href="oplang.html">its own page</a>. Scripts up to <strong>64 KiB</strong> and
<strong>2,000 lines</strong>; a bigger one is refused. The script is kept in the page's address
(after <code>#s=</code>): copy the address to share it.</p>
<p>Examples: {buttons}</p>
<textarea id="script" spellcheck="false" rows="16" aria-label="script"></textarea>
<p><button id="run">Run (Ctrl+Enter)</button> <a id="share" href="#">link to this script</a>
<span id="status" role="status">loading the model...</span></p>
<div id="error" hidden></div>
<div class="run"><pre id="trace" class="trace steps"></pre>
<div id="state" class="state-panel" aria-live="polite"></div></div>
<noscript><p>The playground needs JavaScript; the rule and example pages do not.</p></noscript>"""
    site.write("playground.html", "Playground", body,
               scripts=("examples.js", "playground-module.js", "state_view.js", "playground.js"))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--playground", required=True, help="the Emscripten module (playground.js)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if os.path.isdir(args.out):
        # Only a site this script wrote is replaced, never a folder given by mistake.
        if os.listdir(args.out) and not os.path.exists(os.path.join(args.out, "playground.html")):
            sys.exit(f"spec-site: {args.out} is not empty and not a spec site; not replacing it")
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    site = Site(root, args.out)

    rules, others = S.parse_spec(root)
    if not rules:
        sys.exit("spec-site: SPEC.md has no **R<n> ...** rules")
    tests = S.index_tests(root)
    examples = S.load_examples(root, rules + others)
    catalog = S.load_catalog(root, rules)
    grammar, ops = S.load_ops(root)
    run_traces(args.playground, examples)

    for rule in rules + others:
        rule_page(site, rule, tests, examples, catalog)
    guides = guide_pages(site)
    index_page(site, rules, others, examples, guides)
    oplang_page(site, grammar, ops)
    bugs_page(site, catalog, tests, examples, rules)
    example_pages(site, examples)
    playground_page(site, examples)
    for name in ("style.css", "playground.js", "state_view.js", "rule.js"):
        shutil.copy(os.path.join(HERE, "static", name), args.out)
    shutil.copy(args.playground, os.path.join(args.out, "playground-module.js"))
    for path in sorted(site.linked):
        site.write(source_page(path), path, code_block(S.read(root, path).rstrip("\n"), 1, True))
    for w in site.warnings:
        print("    warning: " + w)
    print(f"    {len(rules)} rules, {len(ops)} ops, {len(catalog)} planted bugs, {len(examples)} examples, "
          f"{len(site.linked)} source pages")


if __name__ == "__main__":
    main()
