#!/usr/bin/env python3
"""Check an exported student kit for solution code and reference answers.

  solution-lines.py SOLUTIONS KIT

Every line of code inside a `// >>> solution` block of SOLUTIONS/*/*.c
(up to `// === skeleton` or `// <<< solution`), and every answered `Qn:` line
and `why:` text of SOLUTIONS/*/answers.md, is searched for in every text
file of KIT. Trivial lines (braces, `return x;`, short lines, comments) are
skipped. A line that also occurs in the kit's provided C code (common/,
the drivers and headers, the grader) is harness code the labs share, not a
copy of the solution: it is listed as allowed, never as a leak. Prints the
leaks (file:line: text) and exits 1 if there is any."""
import os
import re
import sys

sol_dir, kit = sys.argv[1], sys.argv[2]
TRIVIAL = re.compile(r"^([{}();,\s]*|(return|break|continue)\b.{0,12};|//.*|/\*.*|\*.*|#.*|else.{0,3})$")


def solution_lines():
    lines = {}
    for lab in sorted(os.listdir(sol_dir)):
        d = os.path.join(sol_dir, lab)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".c"):
                continue
            path = os.path.join(d, name)
            state = 0
            for text in open(path, encoding="utf-8", errors="replace"):
                s = text.strip()
                if re.fullmatch(r"// >>> solution", s):
                    state = 1
                elif re.fullmatch(r"// === skeleton", s):
                    state = 2
                elif re.fullmatch(r"// <<< solution", s):
                    state = 0
                elif state == 1 and len(s) >= 12 and not TRIVIAL.match(s):
                    lines.setdefault(s, "%s/%s" % (lab, name))
        answers = os.path.join(d, "answers.md")
        if os.path.isfile(answers):
            why = False
            for text in open(answers, encoding="utf-8", errors="replace"):
                s = text.strip()
                if not s or s.startswith("#"):
                    why = False
                elif re.match(r"Q[0-9]+:\s*\S", s):
                    lines.setdefault(s, "%s/answers.md" % lab)
                elif s.startswith("why:") or why:
                    why = True
                    body = s[4:].strip() if s.startswith("why:") else s
                    if len(body) >= 20:
                        lines.setdefault(body if not s.startswith("why:") else s, "%s/answers.md" % lab)
    return lines


def kit_files():
    for base, dirs, files in os.walk(kit):
        dirs[:] = [x for x in dirs if x not in (".git", "build", "grade-out")]
        for f in files:
            path = os.path.join(base, f)
            try:
                data = open(path, "rb").read()
            except OSError:
                continue
            if b"\0" in data[:4096]:
                continue  # images and other binaries
            yield os.path.relpath(path, kit), data.decode("utf-8", "replace").splitlines()


def provided(rel):
    if rel.startswith(("common/", "grader/")) and rel.endswith((".c", ".h", ".cu")):
        return True
    return bool(re.match(r"labs/[^/]+/(main\.c|[^/]+\.h)$", rel))


sol = solution_lines()
files = list(kit_files())
harness = set()
for rel, lines in files:
    if provided(rel):
        harness.update(l.strip() for l in lines)
allowed = sorted(s for s in sol if s in harness)
leaks = []
for rel, lines in files:
    if provided(rel):
        continue
    for i, l in enumerate(lines, 1):
        s = l.strip()
        if s in sol and s not in harness:
            leaks.append("%s:%d: %s   (from solutions/%s)" % (rel, i, s, sol[s]))
print("solution-lines: %d solution lines searched in %d kit files; %d also in the provided "
      "harness code (allowed)" % (len(sol), len(files), len(allowed)))
for s in allowed:
    print("  allowed (harness code): " + s)
for leak in leaks:
    print("LEAK " + leak)
print("solution-lines: %d leak(s)" % len(leaks))
sys.exit(1 if leaks or not sol else 0)
