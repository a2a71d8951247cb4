#!/usr/bin/env python3
"""No answer key in a student kit: every value of the instructor's answer
key (grader/hidden/answers.conf) is looked for in the kit, in each form a
student could read it as the answer to its question:
  - the key's own line (`lab1.q2 = 2`, any spacing, `:` or `=`), except a
    question's one points line in grader/points.conf (same syntax);
  - the question answered in the lab's files (`Q2: 2` in labs/lab1_*/answers.md
    or any file of the lab's folder);
  - grader code that accepts it (`accept_value(acc, 2)`, a choice mask
    `choices = 1u << 1`, a rank list `{3, 4, 5}`, as grader/questions.c
    held them before the key moved out).
Usage: grader/tests/answer-key-leaks.py KEY KIT   (exit 1 naming each leak)"""
import os
import re
import sys


def key_entries(path):
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"lab(\d+)\.q(\d+)\s*=\s*(.+)", line)
        if m:
            yield int(m.group(1)), int(m.group(2)), m.group(3).strip()


def texts(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        for f in files:
            p = os.path.join(d, f)
            try:
                with open(p, encoding="utf-8") as fh:
                    yield os.path.relpath(p, root), fh.read()
            except (UnicodeDecodeError, OSError):
                continue  # binary files (plots) hold no key


# The kit's points file writes each question's points in the key's own syntax
# (`lab1.q2 = 1`): a one-digit answer equal to the points is no leak there.
# A key line copied into it still is: it makes a second line for the question.
POINTS = os.path.join("grader", "points.conf")


def points_line_only(text, lab, q):
    lines = re.findall(r"(?m)^\s*lab%d\.q%d\s*[=:]" % (lab, q), text)
    return len(lines) == 1


def value_pattern(value):
    """The value as a student or a C table could write it."""
    tokens = re.split(r"[\s,]+", value)
    if all(re.fullmatch(r"[a-z]", t) for t in tokens):
        return r"\(?(?:" + "|".join(tokens) + r")\b\)?"
    if all(re.fullmatch(r"\d+", t) for t in tokens) and len(tokens) > 1:
        return r"\[?" + r"[\s,;]+".join(tokens) + r"\]?"
    return re.escape(value) + r"(?![\d.])"


def main():
    key, kit = sys.argv[1], sys.argv[2]
    entries = list(key_entries(key))
    if not entries:
        print(f"FAIL no entries in {key}")
        return 1
    files = list(texts(kit))
    leaks = []
    for lab, q, value in entries:
        v = value_pattern(value)
        forms = [
            (r"lab%d\.q%d\s*[=:]\s*%s" % (lab, q, v), None),
            (r"(?m)^\W*Q%d\W*[:)]\W*%s\s*$" % (q, v), "labs/lab%d_" % lab),
        ]
        tokens = re.split(r"[\s,]+", value)
        if re.fullmatch(r"[\d.]+", value):
            forms.append((r"accept_value\(\s*acc\s*,\s*%s\s*\)" % re.escape(value), "grader/"))
        if all(re.fullmatch(r"[a-z]", t) for t in tokens):
            masks = "|".join(str(ord(t) - ord("a")) for t in tokens)
            forms.append((r"choices\s*=\s*1u\s*<<\s*(?:%s)\b" % masks, "grader/"))
        if len(tokens) > 1 and all(re.fullmatch(r"\d+", t) for t in tokens):
            forms.append((r"\{\s*" + r"\s*,\s*".join(tokens) + r"\s*\}", "grader/"))
        for pattern, where in forms:
            rx = re.compile(pattern)
            for rel, text in files:
                if where and not rel.startswith(where):
                    continue
                if where is None and rel == POINTS and points_line_only(text, lab, q):
                    continue  # its one `labN.qM = N` line is the question's points
                m = rx.search(text)
                if m:
                    line = text.count("\n", 0, m.start()) + 1
                    leaks.append(f"lab {lab} Q{q} ({value}): {rel}:{line}: {m.group(0).strip()[:80]}")
    for leak in leaks:
        print("FAIL answer key in the kit:", leak)
    print(f"answer key: {len(entries)} values looked for in {len(files)} files of {kit}: "
          f"{len(leaks)} found")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
