"""What the spec site reads from the tree: SPEC.md's rules and its table "Where each rule
lives", the model's functions, every test's name and place, the example scripts, the
operation language and the planted-bug catalog. Everything is read at generation time, so
the site cannot drift from the sources."""

import fnmatch
import os
import re
from dataclasses import dataclass, field

# Folders never scanned for tests or sources (build output, fuzz work, caches).
SKIP_DIRS = {"build", ".git", "work", ".cache", "node_modules"}
TEST_RE = re.compile(
    r"^[ \t]*(TEST|TEST_F|TEST_P|TYPED_TEST|RC_GTEST_PROP|RC_GTEST_FIXTURE_PROP)\(\s*(\w+)\s*,\s*(\w+)",
    re.M)


@dataclass
class Rule:
    number: int  # 0 for the table's rows that are not numbered rules
    slug: str  # the page's file name without .html
    title: str
    text: str = ""  # the rule's markdown in SPEC.md
    model_cell: str = ""  # the table's "model" cell
    tests_cell: str = ""  # the table's "tests" cell
    summary: str = ""  # its row in SPEC's "The rules in one sentence"


@dataclass
class Test:
    name: str  # Suite.Name
    path: str  # relative to the root
    line: int
    macro: str


@dataclass
class Definition:
    name: str  # as SPEC names it
    path: str
    first: int  # 1-based lines, the comment above included
    last: int
    code: str


@dataclass
class Example:
    name: str  # file name without .script
    path: str
    text: str
    rules: set = field(default_factory=set)  # rule numbers it names in comments or SPEC's table
    trace: dict = field(default_factory=dict)  # status, output, line, column (from the wasm)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def walk(root, exts):
    """Every file under root with one of the extensions, as sorted relative paths."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(".")]
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(exts)]
    return sorted(out)


def parse_spec(root):
    """The rules R1..Rn (text, title) with their table rows, then the table's other rows."""
    spec = read(root, "SPEC.md")
    rules = {}
    heads = list(re.finditer(r"^\*\*R(\d+) ([^*]+?)\.?\*\*", spec, re.M))
    for h in heads:
        end = re.compile(r"^(\*\*R\d+ |## )", re.M).search(spec, h.end())
        n = int(h.group(1))
        rules[n] = Rule(n, f"rule-R{n}", h.group(2).strip(),
                        spec[h.start():end.start() if end else len(spec)].strip())
    others = []
    table = spec.split("## Where each rule lives", 1)
    for line in table[1].splitlines() if len(table) > 1 else []:
        if line.startswith("## "):
            break
        cells = split_row(line)
        if len(cells) != 3 or cells[0] == "rule" or set(cells[0]) <= set("-: "):
            continue
        m = re.match(r"R(\d+)\b", cells[0])
        if m and int(m.group(1)) in rules:
            rules[int(m.group(1))].model_cell, rules[int(m.group(1))].tests_cell = cells[1:]
        else:
            slug = "entry-" + re.sub(r"[^a-z0-9]+", "-", cells[0].lower()).strip("-")
            others.append(Rule(0, slug, cells[0].strip("`"), "", cells[1], cells[2]))
    for line in spec.split("## The rules in one sentence", 1)[-1].split("\n## ", 1)[0].splitlines():
        cells = split_row(line)
        m = re.fullmatch(r"R(\d+)", cells[0]) if len(cells) == 2 else None
        if m and int(m.group(1)) in rules:
            rules[int(m.group(1))].summary = cells[1]
    return [rules[n] for n in sorted(rules)], others


def split_row(line):
    """A markdown table row's cells (pipes inside `code` do not split)."""
    if not line.startswith("|"):
        return []
    cells, cur, in_code = [], "", False
    for c in line.strip()[1:-1]:
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += c
    return cells + [cur.strip()]


def index_tests(root):
    """Every GoogleTest and RapidCheck test in the tree: Suite.Name -> where it is defined."""
    tests = []
    for path in walk(root, (".cpp", ".cc")):
        text = read(root, path)
        for m in TEST_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            tests.append(Test(f"{m.group(2)}.{m.group(3)}", path, line, m.group(1)))
    return tests


def match_tests(pattern, tests):
    """The tests a SPEC name or glob names (`Topics.*`, `Errors.CreateTopic*`, `Suite*`)."""
    if "." not in pattern:
        pattern += ".*" if pattern.endswith("*") else ".*"
    return [t for t in tests if fnmatch.fnmatchcase(t.name, pattern)]


def find_definitions(root, name):
    """The model's definitions of a function (or type, or member) SPEC names, with the
    comment above each; none if model/ has no such name."""
    files = walk(os.path.join(root, "model"), (".cpp", ".h"))
    files = ["model/" + f for f in files if "/tests/" not in "/" + f]
    parts = name.split("::")
    last = parts[-1]
    pattern = r"\w*".join(re.escape(p) for p in last.split("*"))  # `*_or_throw`: a family
    qualified = r"(?:\w+::)*" if len(parts) == 1 else re.escape("::".join(parts[:-1])) + "::"
    found = []
    # A function defined at the left margin: its name, an argument list, then a body.
    fn = re.compile(r"^(?![ \t/#])[^(=]*?\b" + qualified + pattern + r"\(")
    for path in files:
        lines = read(root, path).splitlines()
        for i, line in enumerate(lines):
            if fn.match(line) and not line.rstrip().endswith(";"):
                found.append(block(name, path, lines, i))
    if found:
        return found
    # A type, or a member of a type: the struct's block, or the member's lines in it.
    for path in files:
        lines = read(root, path).splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^\s*(struct|class|enum class)\s+" + re.escape(last) + r"\b", line):
                return [block(name, path, lines, i)]
        if len(parts) > 1:
            for i, line in enumerate(lines):
                if re.match(r"^\s*(struct|class|enum class)\s+" + re.escape(parts[-2]) + r"\b", line):
                    whole = block(name, path, lines, i)
                    for j in range(whole.first - 1, whole.last):
                        if re.search(r"\b" + re.escape(last) + r"\b", lines[j]) and j > i:
                            return [member(name, path, lines, j)]
    return []


def comment_above(lines, i):
    while i > 0 and lines[i - 1].strip().startswith("//"):
        i -= 1
    return i


def block(name, path, lines, i):
    """Lines i.. through the brace that closes the first one opened (or the line's `;`)."""
    start, depth, j, opened = comment_above(lines, i), 0, i, False
    while j < len(lines):
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|//.*', "", lines[j])
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
            break
        j += 1
    return Definition(name, path, start + 1, j + 1, "\n".join(lines[start:j + 1]))


def member(name, path, lines, j):
    start = comment_above(lines, j)
    return Definition(name, path, start + 1, j + 1, "\n".join(lines[start:j + 1]))


def load_examples(root, rules_table):
    """examples/**/*.script with the rules each names in its comments or in SPEC's table."""
    examples = []
    for path in walk(os.path.join(root, "examples"), (".script",)):
        path = "examples/" + path
        text = read(root, path)
        ex = Example(os.path.splitext(os.path.basename(path))[0], path, text)
        ex.rules = {int(n) for line in text.splitlines() if "#" in line
                     for n in re.findall(r"\bR(\d+)\b", line.split("#", 1)[1])}
        for rule in rules_table:
            if path in rule.tests_cell and rule.number:
                ex.rules.add(rule.number)
        examples.append(ex)
    return examples


def load_catalog(root, rules_table):
    """mutants/catalog.tsv rows, each with the rules it breaks (SPEC's table names the bug as
    planted, or the patch's description or the mistake names the rule)."""
    rows = []
    for line in read(root, "mutants/catalog.tsv").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cols = (line.split("\t") + ["", "", "", ""])[:4]
        name, kind, mistake, suites = cols
        patch = f"mutants/patches/{name}.patch"
        has_patch = os.path.exists(os.path.join(root, patch))
        described = read(root, patch).splitlines()[0] if has_patch else ""
        rules = {int(n) for n in re.findall(r"\bR(\d+)\b", described + " " + mistake)}
        for rule in rules_table:
            if rule.number and re.search(r"`" + re.escape(name) + r"`", planted_part(rule.tests_cell)):
                rules.add(rule.number)
        rows.append(dict(name=name, kind=kind, mistake=mistake, suites=suites.split(),
                         patch=patch if has_patch else None, rules=sorted(rules)))
    return rows


def suite_tests(spec, tests, examples):
    """A catalog suite (`test:BIN[:FILTER]`, `prop:NAME`, `fiber:FILTER`, `crash:NAME`,
    `trace:NAME`) as the tests (or example) it runs; others (fuzz, conform) run none of them."""
    kind, _, rest = spec.partition(":")
    name, _, filt = rest.partition(":")
    if kind == "test":
        return [t for t in tests if os.path.basename(t.path) == name + ".cpp"
                and (not filt or fnmatch.fnmatchcase(t.name, filt))]
    if kind == "prop":
        return match_tests("BrokerMatchesModel." + rest, tests)
    if kind == "crash":
        return match_tests("CrashPoints." + rest, tests)
    if kind == "fiber":
        return [t for t in tests if fnmatch.fnmatchcase(t.name, rest)]
    if kind == "trace":
        return [e for e in examples if e.name == rest]
    return []


def planted_part(cell):
    return " ".join(re.findall(r"planted[^)]*", cell))


def load_ops(root):
    """The operation language: the grammar comment of text.h, and each op of ops.h (in the
    Op variant's order) with its doc comment, its fields and its text keyword."""
    text_h = read(root, "oplang/include/oplang/text.h")
    grammar = "\n".join(l[3:] if l.startswith("// ") else l[2:]
                        for l in text_h.split("#pragma once")[0].splitlines() if l.startswith("//"))
    ops_h = read(root, "oplang/include/oplang/ops.h")
    printer = read(root, "oplang/src/text_print.cpp")
    order = re.search(r"using Op =\s*std::variant<([^;]*)>;", ops_h, re.S).group(1)
    ops = []
    lines = ops_h.splitlines()
    for name in [n.strip() for n in order.split(",")]:
        i = next(k for k, l in enumerate(lines) if re.match(r"struct " + name + r"\b", l))
        d = block(name, "oplang/include/oplang/ops.h", lines, i)
        doc = " ".join(l.strip()[3:].strip() for l in lines[d.first - 1:i] if l.strip().startswith("//"))
        fields = [f.strip().rstrip(";") for f in lines[i + 1:d.last - 1]
                  if f.strip().endswith(";") and "operator==" not in f]
        m = re.search(r"operator\(\)\(const " + name + r"\b[^{]*\{\s*(?:[^\"]*?)\"([a-z_]+)", printer)
        keyword = m.group(1) if m else re.sub(r"(?<!^)([A-Z])", r"_\1", name.replace("Get", "", 1)).lower()
        forms = []  # one entry per grammar line, its deeper-indented continuations joined on
        for l in grammar.splitlines():
            if forms and re.match(r" {6,}\[", l):
                forms[-1] += " " + l.strip()
            else:
                forms.append(l.strip())
        form = [seg.strip() for l in forms for seg in re.split(r"\s{3,}", l)
                if re.match(r"(\w+\|)*" + re.escape(keyword) + r"(\|\w+)*\b", seg.strip())]
        ops.append(dict(name=name, keyword=keyword, doc=doc, fields=fields,
                        form=form[0] if form else keyword, line=i + 1))
    return grammar, ops
