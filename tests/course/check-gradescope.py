#!/usr/bin/env python3
"""Validate a Gradescope results.json against the fields Gradescope's
autograder specification documents, print it, and check the score.

  check-gradescope.py RESULTS full|partial|zero [before-due]

full: score == the sum of max_score, every test passed; partial: 0 < score <
that sum, and each failed test says why in its output; zero: score 0. The
hidden runs' entries (after_due_date) have max_score 0 and a score <= 0: the
points their runs cost. before-due: the score is the visible tests' sum (the
hidden entries are counted after the due date); bonus tests are extra
credit (max_score 0)."""
import json
import sys

VIS = {"hidden", "after_due_date", "after_published", "visible"}
TOP = {"score", "execution_time", "output", "output_format", "test_output_format",
       "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST = {"score", "max_score", "status", "name", "name_format", "number", "output",
        "output_format", "tags", "visibility", "extra_data"}
problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


path, want = sys.argv[1], sys.argv[2]
data = json.load(open(path, encoding="utf-8"))
print(json.dumps(data, indent=2, ensure_ascii=False))
num = (int, float)
need(isinstance(data, dict), "the top level is an object")
need(not set(data) - TOP, "only documented top-level keys (extra: %s)" % sorted(set(data) - TOP))
need(isinstance(data.get("score"), num), "score is a number")
need(isinstance(data.get("execution_time"), num), "execution_time is a number (seconds)")
need(isinstance(data.get("output"), str), "output is a string")
need(data.get("visibility") in VIS, "visibility is one of %s" % sorted(VIS))
need(data.get("stdout_visibility") in VIS, "stdout_visibility is one of %s" % sorted(VIS))
tests = data.get("tests")
need(isinstance(tests, list) and tests, "tests is a non-empty list")
tests = tests if isinstance(tests, list) else []
total = top = shown = 0.0
for i, t in enumerate(tests):
    tag = "tests[%d]" % i
    need(isinstance(t, dict), tag + " is an object")
    if not isinstance(t, dict):
        continue
    need(not set(t) - TEST, tag + " has only documented keys (extra: %s)" % sorted(set(t) - TEST))
    need(isinstance(t.get("name"), str) and t["name"], tag + ".name is a non-empty string")
    need(isinstance(t.get("score"), num), tag + ".score is a number")
    need(isinstance(t.get("max_score"), num), tag + ".max_score is a number")
    need(isinstance(t.get("output"), str), tag + ".output is a string")
    need(t.get("visibility") in VIS, tag + ".visibility is documented")
    need(t.get("status") in (None, "passed", "failed"), tag + ".status is passed or failed")
    if isinstance(t.get("score"), num) and isinstance(t.get("max_score"), num):
        if t.get("visibility") == "after_due_date":
            # A check's hidden runs: worth nothing alone, it takes back what they cost.
            need(t["max_score"] == 0 and t["score"] <= 0, tag + ": a hidden runs' entry: max_score 0, score <= 0")
        elif "(bonus)" in t.get("name", "") and t["max_score"] == 0:
            need(t["score"] >= 0, tag + ": a bonus test (extra credit): score >= 0")
        else:
            need(0 <= t["score"] <= t["max_score"], tag + ": 0 <= score <= max_score")
        total += t["score"]
        if t.get("visibility") == "visible":
            shown += t["score"]
        top += t["max_score"]
        if want == "partial" and t["score"] < t["max_score"]:
            need(len(t.get("output", "")) > 10, tag + " failed and its output says why")
board = data.get("leaderboard", [])
need(isinstance(board, list), "leaderboard is a list")
for i, e in enumerate(board if isinstance(board, list) else []):
    need(isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), (int, float, str))
         and e.get("order", "desc") in ("asc", "desc") and not set(e) - {"name", "value", "order"},
         "leaderboard[%d] is {name, value[, order asc|desc]}" % i)
score = data.get("score", -1)
# After the due date the score is every test's; before it, the visible ones'.
before = len(sys.argv) > 3 and sys.argv[3] == "before-due"
need(abs(score - (shown if before else total)) < 1e-6, "score %s equals the sum of the %s tests' scores %s" %
     (score, "visible" if before else "", shown if before else total))
if want == "full":
    need(top > 0 and score >= top - 1e-6, "full marks: %s of %s" % (score, top))
elif want == "partial":
    need(0 < score < top, "a partial score: %s of %s" % (score, top))
else:
    need(score == 0, "score 0 (got %s)" % score)
for p in problems:
    print("INVALID: " + p)
print("check-gradescope: %s: %s / %s, %s" % (path, score, top, "valid" if not problems else "%d problem(s)" % len(problems)))
sys.exit(1 if problems else 0)
