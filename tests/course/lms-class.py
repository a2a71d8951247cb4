#!/usr/bin/env python3
"""A class of 14 handed in through three platforms, for the intake test.

  lms-class.py make DIR LAB1_REFERENCE LAB1_SKELETON
      writes DIR/canvas/ (Canvas's download names), DIR/blackboard/
      (Blackboard's), DIR/gradescope/ (an export: submission_metadata.yml and
      submission_<id>/ folders), DIR/mixed/ (one Canvas and one Blackboard
      name), DIR/roster.csv and DIR/course.conf (due date, one extension,
      10 %/day; two extensions).
  lms-class.py check DIR
      reads DIR/{canvas,blackboard,gradescope}-out/ (tools/grade-handins'
      outputs) and prints one BAD line per problem, then a summary.

Who is who (lab 1): ann, smith1 and smith2 (namesakes: John Smith, Canvas
ids 111 and 222; smith1's tarball renamed lab1.tar.gz, smith2's late and
not building, an older attachment superseded), eve (uploads only a file
named for ann, Blackboard-style text inside her Canvas name), dan (a zip),
fay (a file without Canvas's prefix: not attributed, on fay's row), max and
nia (Canvas's LATE, no time: nia's counts a day, -10 %; max's is inside his
2-day extension, which Canvas does not know of); hal
(two Blackboard attempts, the later one a day and a half late: -20 %), ivy
(an extension of 2 days, a forged second `_attempt_` time in her own part
of the name), gus (does not build); jo and kim (Gradescope export, by sid
and by email), submission_5003 (in no metadata: no one's), lee (nothing)."""
import csv, io, os, re, sys, tarfile


def tarball(path, files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as t:
        for name, data in files.items():
            ti = tarfile.TarInfo("lab1_bootstrap/" + name)
            ti.size, ti.mode = len(data), 0o644
            t.addfile(ti, io.BytesIO(data))
    open(path, "wb").write(buf.getvalue())


def make(d, ref, skel):
    rd = lambda p, f: open(os.path.join(p, f), "rb").read()
    good = {"bootstrap.c": rd(ref, "bootstrap.c"), "answers.md": rd(ref, "answers.md")}
    old = {"bootstrap.c": rd(skel, "bootstrap.c"), "answers.md": rd(skel, "answers.md")}
    broken = {"bootstrap.c": b"int broken(void) { return }\n", "answers.md": good["answers.md"]}
    for sub in ("canvas", "blackboard", "gradescope", "mixed"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    c = lambda n: os.path.join(d, "canvas", n)
    tarball(c("leeann_101_9001_handin-ann-lab1.tar.gz"), good)
    tarball(c("smithjohn_111_9002_lab1.tar.gz"), good)                      # renamed
    tarball(c("smithjohn_222_8000_handin-john-lab1.tar.gz"), old)            # older attachment
    tarball(c("smithjohn_LATE_222_9003_handin-john-lab1.tar.gz"), broken)    # newer, late
    tarball(c("evanseve_444_9004_ann_attempt_2026-12-31-23-59-59_handin-ann-lab1-9.tar.gz"), old)
    open(c("dixdan_555_9005_lab1.zip"), "wb").write(b"PK\x05\x06" + b"\0" * 18)
    tarball(c("handin-fay-lab1.tar.gz"), good)                              # no Canvas prefix
    tarball(c("moremax_LATE_777_9006_handin-max-lab1.tar.gz"), good)         # late, extension
    tarball(c("nunnia_LATE_888_9007_handin-nia-lab1.tar.gz"), good)          # late
    b = lambda n: os.path.join(d, "blackboard", n)
    tarball(b("Lab 1_hal_attempt_2026-11-19-09-00-00_handin-hal-lab1.tar.gz"), old)
    tarball(b("Lab 1_hal_attempt_2026-11-22-09-00-00_handin-hal-lab1.tar.gz"), good)
    tarball(b("Lab 1_ivy_attempt_2026-11-22-12-00-00_x_attempt_2026-01-01-00-00-00_handin-ivy-lab1.tar.gz"), good)
    tarball(b("Lab 1_gus_attempt_2026-11-20-10-00-00_handin-gus-lab1.tar.gz"), broken)
    g = os.path.join(d, "gradescope")
    os.makedirs(os.path.join(g, "submission_5001"))
    for f, data in good.items():
        open(os.path.join(g, "submission_5001", f), "wb").write(data)
    os.makedirs(os.path.join(g, "submission_5002", "lab1_bootstrap"))
    for f, data in broken.items():
        open(os.path.join(g, "submission_5002", "lab1_bootstrap", f), "wb").write(data)
    os.makedirs(os.path.join(g, "submission_5003"))
    open(os.path.join(g, "submission_5003", "bootstrap.c"), "wb").write(good["bootstrap.c"])
    open(os.path.join(g, "submission_metadata.yml"), "w").write("""submission_5001:
  :submitters:
  - :name: Jo Jones
    :sid: '1010'
    :email: jo@uni.edu
  :created_at: 2026-11-20 10:00:00.000000000 -08:00
  :score: 0.0
submission_5002:
  :submitters:
  - :name: Kim Kay
    :sid: ''
    :email: kim@uni.edu
  :created_at: 2026-11-20 11:00:00.000000000 -08:00
""")
    tarball(os.path.join(d, "mixed", "leeann_101_9001_handin-ann-lab1.tar.gz"), good)
    tarball(os.path.join(d, "mixed", "Lab 1_hal_attempt_2026-11-19-09-00-00_x.tar.gz"), good)
    open(os.path.join(d, "roster.csv"), "w").write("""id,name,aliases,canvas_id,sis_user_id,section
ann,Ann Lee,,101,S101,A
smith1,John Smith,,111,S111,A
smith2,John Smith,,222,S222,B
eve,Eve Evans,,444,S444,B
dan,Dan Dix,,555,S555,A
fay,Fay Fox,,666,S666,A
gus,Gus Gray,gus,,,
hal,Hal Hill,hal,,,
ivy,Ivy Iles,ivy,,,
jo,Jo Jones,1010;jo@uni.edu,,,
kim,Kim Kay,kim,,,
lee,Lee Lo,,,,
max,Max More,,777,S777,A
nia,Nia Nunn,,888,S888,B
""")
    open(os.path.join(d, "course.conf"), "w").write("""# the test course: lab 1 due, 10 % a day, one extension
due.lab1 = 2026-11-20T23:59:00-08:00
late.per_day = 10
late.cap = 50
late.local_offset = -08:00
extension.ivy.lab1 = 2
extension.max = 2
canvas.lab1 = 7001
""")


def check(d):
    bad = []
    rows, reports = {}, {}
    for lms in ("canvas", "blackboard", "gradescope"):
        out = os.path.join(d, lms + "-out")
        try:
            rows[lms] = {r["student_id"]: r for r in csv.DictReader(open(os.path.join(out, "grades", "gradebook.csv")))}
            reports[lms] = open(os.path.join(out, "grades", "class-report.md")).read()
        except OSError as e:
            bad.append("%s: no gradebook or class report: %s" % (lms, e))
            rows[lms], reports[lms] = {}, ""
        # 0 lost: every file of the folder is in the manifest.
        try:
            listed = {l.split("\t")[0] for l in open(os.path.join(out, "handins.tsv")).read().splitlines()[1:]}
        except OSError:
            listed = set()
        for f in os.listdir(os.path.join(d, lms)):
            if f != "submission_metadata.yml" and f not in listed:
                bad.append("%s: %s is in no row of handins.tsv (lost)" % (lms, f))
    roster = [r["id"] for r in csv.DictReader(open(os.path.join(d, "roster.csv")))]
    for lms in rows:
        for sid in roster:
            if sid not in rows[lms]:
                bad.append("%s: roster student %s has no row" % (lms, sid))
    C, B, G = rows["canvas"], rows["blackboard"], rows["gradescope"]
    num = lambda r, k: float(r.get(k) or "nan")

    def want(cond, what, r):
        if not cond:
            bad.append("%s: %s" % (what, {k: r.get(k) for k in ("student_id", "lab1", "lab1_raw", "lab1_late_penalty", "lab1_status", "late", "submitted_at", "notes", "late_rule")}))

    r = C.get("ann", {}); want(num(r, "lab1") == 24 and "evanseve_444_9004" in r.get("notes", ""), "ann (the victim): 24 and eve's file named on her row", r)
    r = C.get("eve", {}); want(num(r, "lab1") == 0 and "another student (ann)" in r.get("notes", ""), "eve: her claim for ann refused on her row", r)
    r = C.get("smith1", {}); want(num(r, "lab1") == 24, "smith1 (renamed lab1.tar.gz behind Canvas's prefix): 24", r)
    r = C.get("smith2", {}); want(r.get("lab1_status") == "not built" and r.get("late") == "lab1" and "superseded" in r.get("notes", ""), "smith2 (namesake): his own newer, late, broken hand-in; the older one superseded", r)
    r = C.get("dan", {}); want(num(r, "lab1") == 0 and "not a gzip tarball" in r.get("notes", ""), "dan: his zip reported on his row", r)
    r = C.get("fay", {}); want("handin-fay-lab1.tar.gz" in r.get("notes", "") and "unattributed" in r.get("notes", ""), "fay: the file without Canvas's prefix on her row", r)
    for f in ("evanseve_444_9004", "dixdan_555_9005_lab1.zip", "handin-fay-lab1.tar.gz"):
        if f not in reports["canvas"]:
            bad.append("canvas: %s not in the class report's hand-in summary" % f)
    r = B.get("hal", {}); want(num(r, "lab1_raw") == 24 and abs(num(r, "lab1") - 19.2) < 1e-9 and num(r, "lab1_late_penalty") == 4.8, "hal: the later attempt, 33 h late: 2 days, -20 %: 19.2", r)
    r = B.get("ivy", {}); want(num(r, "lab1") == 24 and r.get("submitted_at") == "2026-11-22T12:00:00", "ivy: Blackboard's own time, inside her 2-day extension: 24", r)
    r = B.get("gus", {}); want(r.get("lab1_status") == "not built" and num(r, "lab1") == 0, "gus: not built", r)
    r = G.get("jo", {}); want(num(r, "lab1") == 24 and r.get("submitted_at", "").startswith("2026-11-20T10:00:00"), "jo (Gradescope export, by sid): 24, on time", r)
    r = G.get("kim", {}); want(r.get("lab1_status") == "not built", "kim (Gradescope export, by email): not built", r)
    if "submission_5003" not in reports["gradescope"]:
        bad.append("gradescope: submission_5003 (no submitter) not in the class report")
    r = C.get("lee", {}); want(r.get("lab1_status") == "missing", "lee: nothing handed in, still a row", r)
    r = C.get("nia", {}); want(num(r, "lab1_raw") == 24 and abs(num(r, "lab1") - 21.6) < 1e-9 and r.get("late") == "lab1", "nia: Canvas's LATE, no time: a day, -10 %: 21.6", r)
    r = C.get("max", {}); want(num(r, "lab1") == 24 and num(r, "lab1_late_penalty") == 0 and "within the extension" in r.get("late_rule", ""), "max: Canvas's LATE inside his extension: 24, the rule says why", r)
    # Canvas's gradebook import, read as Canvas documents it.
    try:
        table = list(csv.reader(open(os.path.join(d, "canvas-out", "grades", "canvas-gradebook.csv"))))
    except OSError as e:
        table = []
        bad.append("no canvas-gradebook.csv: %s" % e)
    if table:
        head = table[0]
        if head[:5] != ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]:
            bad.append("canvas import: first columns %s" % head[:5])
        if head[5:] != ["Lab 1 (7001)"]:
            bad.append("canvas import: assignment columns %s, want ['Lab 1 (7001)']" % head[5:])
        if table[1][0].strip() != "Points Possible" or table[1][5] != "24":
            bad.append("canvas import: no Points Possible row of 24: %s" % table[1])
        by_id = {t[1]: t for t in table[2:] if t[1]}
        for cid, pts in (("101", 24), ("111", 24), ("222", 0), ("444", 0), ("777", 24), ("888", 21.6)):
            t = by_id.get(cid)
            if not t or float(t[5]) != pts:
                bad.append("canvas import: Canvas user %s has %s, want %s" % (cid, t, pts))
        if by_id.get("111", [""] * 5)[2] != "S111" or by_id.get("222", [""] * 5)[4] != "B":
            bad.append("canvas import: SIS User ID or Section not from the roster")
        for t in table[2:]:
            for v in t[5:]:
                try:
                    float(v)
                except ValueError:
                    bad.append("canvas import: a score that is not a number: %s" % t)
    for b in bad:
        print("BAD:", b)
    print("class: %d students on the roster, %d rows per gradebook; canvas %s, blackboard %s, gradescope %s" %
          (len(roster), len(C), " ".join("%s=%s" % (k, C[k]["lab1"]) for k in sorted(C)),
           " ".join("%s=%s" % (k, B[k]["lab1"]) for k in ("gus", "hal", "ivy") if k in B),
           " ".join("%s=%s" % (k, G[k]["lab1"]) for k in ("jo", "kim") if k in G)))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:5])
    else:
        check(sys.argv[2])
