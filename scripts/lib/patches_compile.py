#!/usr/bin/env python3
"""Does every planted bug still compile? (scripts/mutants --check-compile)

A patch can still apply (scripts/mutants --check) and no longer build, when the code around
it changed meaning: it then fails only on the day the kinds rotation picks it. For each
patch this applies it to a scratch copy of the tree and compiles, syntax only, every file it
touches that is a translation unit, and for a touched header one translation unit that
includes it (from the build's dependency files), with that unit's flags from
compile_commands.json. Needs a configured and built tree (build/default).

Usage: patches_compile.py ROOT BUILD SCRATCH [NAME...]. Prints one line per patch that does
not apply or compile; exits 1 if there was one.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys


def touched(patch_path):
    with open(patch_path) as f:
        return [line[6:].strip() for line in f if line.startswith("+++ b/")]


def main():
    root, build, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    names = sys.argv[4:]
    with open(os.path.join(build, "compile_commands.json")) as f:
        units = {os.path.abspath(e["file"]): e for e in json.load(f)}
    # Each unit's object file (its -o, relative to its directory), to read dependency files.
    src_of_object = {}
    for src, e in units.items():
        args = shlex.split(e["command"])
        if "-o" in args:
            src_of_object[os.path.normpath(os.path.join(e["directory"],
                                                        args[args.index("-o") + 1]))] = src
    # Header -> the first unit whose dependency file names it (sorted: the same one each run).
    depfiles = sorted(glob.glob(os.path.join(build, "**", "*.o.d"), recursive=True))
    dep_text = {}

    def unit_for_header(header):
        for d in depfiles:
            src = src_of_object.get(os.path.normpath(d[:-2]))
            if src is None:
                continue
            if d not in dep_text:
                with open(d, errors="replace") as f:
                    dep_text[d] = f.read()
            if header in dep_text[d]:
                return src
        return None

    if os.path.isdir(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    subprocess.run(["rsync", "-a", "--exclude", "/build/", "--exclude", "/.git/",
                    "--exclude", "/fuzz/work/", root + "/", scratch + "/"], check=True)
    patches = sorted(glob.glob(os.path.join(root, "mutants", "patches", "*.patch")))
    if names:
        patches = [p for p in patches if os.path.basename(p)[:-6] in names]
    bad = 0
    for i, patch in enumerate(patches, 1):
        name = os.path.basename(patch)[:-6]
        files = touched(patch)
        applied = subprocess.run(["patch", "-p1", "-s", "-d", scratch, "-i", patch],
                                 capture_output=True, text=True)
        if applied.returncode != 0:
            print(f"PATCH does not apply: {name}", flush=True)
            bad += 1
            continue
        try:
            for rel in files:
                path = os.path.join(root, rel)
                src = path if path in units else unit_for_header(path)
                if src is None:
                    continue  # a file no unit of this build compiles (another preset's)
                e = units[src]
                args = shlex.split(e["command"].replace(root + "/", scratch + "/"))
                out = []
                skip = False
                for a in args:
                    if skip:
                        skip = False
                        continue
                    if a == "-o":
                        skip = True
                        continue
                    if a == "-c":
                        continue
                    out.append(a)
                out.append("-fsyntax-only")
                r = subprocess.run(out, cwd=e["directory"], capture_output=True, text=True)
                if r.returncode != 0:
                    first = next((l for l in r.stderr.splitlines() if "error" in l), "")
                    print(f"PATCH does not compile: {name} ({os.path.relpath(src, root)}): "
                          f"{first.replace(scratch + '/', '')}", flush=True)
                    bad += 1
                    break
        finally:
            subprocess.run(["patch", "-p1", "-s", "-R", "-d", scratch, "-i", patch],
                           capture_output=True)
        if i % 20 == 0:
            print(f"  {i}/{len(patches)} patches compiled", flush=True)
    print(f"{len(patches) - bad} of {len(patches)} patches compile")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
