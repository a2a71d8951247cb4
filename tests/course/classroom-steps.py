#!/usr/bin/env python3
"""Check the GitHub Classroom workflow of a student kit and print its `run:`
commands, one per NUL-terminated record, for the test to run in order, each
after `export` lines for the job's and the step's `env:` (as GitHub sets
them).

  classroom-steps.py WORKFLOW.yml

GitHub Classroom reads points only from a workflow named "Autograding Tests"
with one job "run-autograding-tests", whose grading reporter gets each
runner's result as <ID>_RESULTS and the runner ids in `runners`."""
import shlex
import sys
import yaml

wf = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
problems = []
if wf.get("name") != "Autograding Tests":
    problems.append("the workflow is not named 'Autograding Tests'")
on = wf.get("on", wf.get(True))
if not on or "push" not in on:
    problems.append("it does not run on push")
jobs = wf.get("jobs") or {}
if list(jobs) != ["run-autograding-tests"]:
    problems.append("the jobs are %s, not the one job run-autograding-tests" % list(jobs))
steps = (jobs.get("run-autograding-tests") or {}).get("steps") or []
ids = [s.get("id") for s in steps if s.get("id")]
reporters = [s for s in steps if str(s.get("uses", "")).startswith("classroom-resources/autograding-grading-reporter@")]
if len(reporters) != 1:
    problems.append("no single autograding-grading-reporter step")
else:
    rep = reporters[0]
    runners = [r.strip() for r in str((rep.get("with") or {}).get("runners", "")).split(",") if r.strip()]
    if not runners:
        problems.append("the reporter names no runners")
    for r in runners:
        if r not in ids:
            problems.append("runner '%s' is no step's id" % r)
        env = (rep.get("env") or {}).get(r.upper() + "_RESULTS", "")
        if "steps.%s.outputs.result" % r not in str(env):
            problems.append("the reporter's %s_RESULTS is not steps.%s.outputs.result" % (r.upper(), r))
if not any(str(s.get("uses", "")).startswith("actions/checkout@") for s in steps):
    problems.append("no checkout step")
for p in problems:
    sys.stderr.write("classroom-steps: " + p + "\n")
if problems:
    sys.exit(1)
job_env = (jobs.get("run-autograding-tests") or {}).get("env") or {}
for s in steps:
    if "run" in s:
        env = dict(job_env, **(s.get("env") or {}))
        exports = "".join("export %s=%s\n" % (k, shlex.quote(str(v))) for k, v in env.items())
        sys.stdout.write(exports + s["run"] + "\0")
