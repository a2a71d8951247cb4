#include "report.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict_word(enum verdict v)
{
    return v == VERDICT_PASS ? "PASS" : v == VERDICT_WARN ? "WARN" : "FAIL";
}

static int verdict_parse(const char *w)
{
    return !w                       ? -1
           : strcmp(w, "PASS") == 0 ? VERDICT_PASS
           : strcmp(w, "WARN") == 0 ? VERDICT_WARN
           : strcmp(w, "FAIL") == 0 ? VERDICT_FAIL
                                    : -1;
}

static const char *const status_words[] = {"graded", "not built", "missing", "not graded"};

const char *lab_status_word(enum lab_status s)
{
    return (unsigned)s < sizeof status_words / sizeof *status_words ? status_words[s] : "?";
}

int lab_status_parse(const char *word)
{
    for (size_t i = 0; word && i < sizeof status_words / sizeof *status_words; i++)
        if (strcmp(word, status_words[i]) == 0) return (int)i;
    return -1;
}

int submission_passed(const struct submission_grade *s)
{
    for (int l = 0; l < s->nlabs; l++)
        for (int c = 0; c < s->labs[l].nchecks; c++)
            if (s->labs[l].checks[c].res.verdict == VERDICT_FAIL) return 0;
    return s->nlabs > 0;
}

void submission_totals(struct submission_grade *s, double *bonus, double *bonus_max)
{
    double b = 0, bm = 0;
    s->score = s->max_score = 0;
    for (int l = 0; l < s->nlabs; l++) {
        s->score += s->labs[l].score;
        s->max_score += s->labs[l].max_score;
        if (s->meta && s->meta[l].bonus) {
            b += s->labs[l].score;
            bm += s->labs[l].max_score;
        }
    }
    if (bonus) *bonus = b;
    if (bonus_max) *bonus_max = bm;
}

void first_problem(const struct submission_grade *s, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        enum lab_status st = s->meta ? s->meta[l].status : LAB_GRADED;
        if (st == LAB_MISSING || st == LAB_NOT_GRADED) {
            snprintf(buf, len, "lab %d: %s", g->lab,
                     st == LAB_MISSING ? "nothing handed in" : "not graded");
            return;
        }
        if (st == LAB_NOT_BUILT) {
            size_t n = strcspn(g->build_log, "\n");
            snprintf(buf, len, "lab %d: did not build: %.*s", g->lab, (int)n, g->build_log);
            return;
        }
        for (int c = 0; c < g->nchecks; c++)
            if (g->checks[c].res.verdict == VERDICT_FAIL) {
                snprintf(buf, len, "lab %d: %s", g->lab, g->checks[c].res.message);
                return;
            }
    }
}

void report_lab_meta(const struct lab_grade *g, int bonus, struct lab_meta *m)
{
    memset(m, 0, sizeof *m);
    m->status = g->built ? LAB_GRADED : LAB_NOT_BUILT;
    m->bonus = bonus;
    snprintf(m->title, sizeof m->title, "%s", g->mod ? g->mod->title : "");
    m->runs = g->nruns ? calloc((size_t)g->nruns, sizeof *m->runs) : NULL;
    for (int i = 0; i < g->nruns && m->runs; i++) {
        const struct run *r = &g->runs[i];
        if (r->excluded) continue;
        if (r->skipped)
            m->skipped++;
        else
            m->ran++;
        struct run_note *n = &m->runs[m->nruns++];
        snprintf(n->label, sizeof n->label, "%s", r->label);
        n->hidden = r->hidden;
        n->made = !r->skipped;
    }
}

void lab_meta_free(struct lab_meta *m)
{
    free(m->runs);
    if (m->loaded_checks) {
        /* Loaded from grade.json: the strings are ours too. */
        for (struct lab_check *c = m->loaded_checks; c->key; c++) {
            free((char *)c->key);
            free((char *)c->title);
            free((char *)c->section);
        }
        free(m->loaded_checks);
    }
    memset(m, 0, sizeof *m);
}

void submission_free(struct submission_grade *s)
{
    for (int l = 0; l < s->nlabs; l++) {
        lab_grade_free(&s->labs[l]);
        if (s->meta) lab_meta_free(&s->meta[l]);
    }
    free(s->labs);
    free(s->meta);
    s->labs = NULL;
    s->meta = NULL;
    s->nlabs = 0;
}

/* A handout section's name as the kit writes them: letters, digits,
 * spaces and a little punctuation, at most 60 characters. */
static int section_name(const char *sec, const char *close)
{
    if (close == sec || close - sec > 60) return 0;
    for (const char *c = sec; c < close; c++)
        if (!isalnum((unsigned char)*c) && !strchr(" ,'()-", *c)) return 0;
    return 1;
}

/* Where to read when a check fails: handouts/labN.md, section "...". When
 * the diagnosis itself sends the student to another lab's handout (a lab
 * this one builds on is unfinished: `... (handouts/lab1.md, "Choosing the
 * GPU")`), the pointer goes there too, not to this lab's section. */

static void read_hint(const struct lab_grade *g, const struct graded_check *gc,
                      const struct check_result *res, char *buf, size_t len)
{
    for (const char *p = res->message; (p = strstr(p, "handouts/lab")) != NULL; p++) {
        int lab = 0, end = 0;
        if (!isdigit((unsigned char)p[12]) ||
            sscanf(p, "handouts/lab%d.md, \"%n", &lab, &end) != 1 || end == 0 || lab < 1 ||
            lab > 9 || lab == g->lab)
            continue;
        const char *sec = p + end, *close = strchr(sec, '"');
        if (!close || !section_name(sec, close)) continue;
        snprintf(buf, len, "read handouts/lab%d.md, section \"%.*s\"", lab, (int)(close - sec),
                 sec);
        return;
    }
    snprintf(buf, len, "read handouts/lab%d.md, section \"%s\"", g->lab,
             gc->check->section ? gc->check->section : "Common mistakes");
}

/* Print `text` wrapped at `width` columns, every line indented. */
static void wrap(FILE *f, const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        int avail = width - indent;
        size_t n = strlen(p);
        size_t cut = n;
        if ((int)n > avail) {
            cut = (size_t)avail;
            while (cut > 0 && p[cut] != ' ') cut--;
            if (cut == 0) cut = (size_t)avail;
        }
        fprintf(f, "%*s%.*s\n", indent, "", (int)cut, p);
        p += cut;
        while (*p == ' ') p++;
    }
}

static const struct lab_meta *meta_of(const struct submission_grade *s, int l)
{
    static const struct lab_meta none = {.status = LAB_GRADED};
    return s->meta ? &s->meta[l] : &none;
}

void report_terminal(FILE *f, const struct submission_grade *s, int color, int width)
{
    const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "";
    const char *yellow = color ? "\033[33m" : "", *bold = color ? "\033[1m" : "";
    const char *off = color ? "\033[0m" : "";
    const struct profile *p = s->env->profile;
    fprintf(f, "%sncclab grader%s%s%s — backend %s, profile %s (busbw ceiling %.0f GB/s%s)\n", bold,
            off, s->student[0] ? " — " : "", s->student, s->env->backend, p->name, p->ceiling_gbps,
            p->memcpy_gbps > 0 ? ", from this machine's memcpy" : "");
    double bonus = 0, bonus_max = 0, score = 0, max_score = 0;
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        const struct lab_meta *m = meta_of(s, l);
        score += g->score;
        max_score += g->max_score;
        if (m->bonus) bonus += g->score, bonus_max += g->max_score;
        fprintf(f, "\n%sLab %d: %s%s   (%d runs%s, %.1f s)\n", bold, g->lab,
                m->title[0] ? m->title : g->mod->title, off, m->ran,
                m->skipped ? ", some skipped" : "", m->status == LAB_MISSING ? 0 : g->seconds);
        if (m->late) fprintf(f, "  %shanded in late%s\n", yellow, off);
        if (m->status == LAB_MISSING) {
            fprintf(f, "  %snothing handed in for this lab%s\n", red, off);
        } else if (m->status == LAB_NOT_GRADED) {
            fprintf(f, "  %snot graded%s\n", red, off);
        } else if (!g->built) {
            fprintf(f, "  %sbuild failed%s:\n", red, off);
            char *log = strdup(g->build_log), *save = NULL;
            int lines = 0;
            for (char *line = strtok_r(log, "\n", &save); line && lines < 25;
                 line = strtok_r(NULL, "\n", &save), lines++)
                fprintf(f, "    %s\n", line);
            free(log);
        }
        if (g->notes[0]) { /* files of the submission the grader did not use */
            char *notes = strdup(g->notes), *save = NULL;
            for (char *line = strtok_r(notes, "\n", &save); line;
                 line = strtok_r(NULL, "\n", &save))
                wrap(f, line, 2, width > 0 ? width : 1 << 20);
            free(notes);
        }
        fprintf(f, "  %-52s %9s  %s\n", "check", "points", "result");
        for (int c = 0; c < g->nchecks; c++) {
            const struct graded_check *gc = &g->checks[c];
            const char *col = gc->res.verdict == VERDICT_PASS   ? green
                              : gc->res.verdict == VERDICT_WARN ? yellow
                                                                : red;
            char pts[32];
            snprintf(pts, sizeof pts, "%g / %g", gc->points, gc->max_points);
            fprintf(f, "  %-52.52s %9s  %s%s%s\n", gc->check->title, pts, col,
                    verdict_word(gc->res.verdict), off);
            /* A passed check with a message carries a note for a person
             * (answers.md's "why:" text): in report.txt, not on the terminal. */
            if (gc->res.verdict == VERDICT_PASS && gc->res.message[0] && width == 0)
                wrap(f, gc->res.message, 6, 1 << 20);
            if (gc->res.verdict != VERDICT_PASS) {
                wrap(f, gc->res.message, 6, width > 0 ? width : 1 << 20);
                if (gc->res.problems > 1)
                    fprintf(f, "      (%d problems in all; the first is shown)\n",
                            gc->res.problems);
                if (gc->res.verdict == VERDICT_FAIL && !gc->res.not_graded) {
                    char hint[256];
                    read_hint(g, gc, &gc->res, hint, sizeof hint);
                    fprintf(f, "      → %s\n", hint);
                }
            }
        }
        char total[32];
        snprintf(total, sizeof total, "%g / %g", g->score, g->max_score);
        fprintf(f, "  %s%-52s %9s%s\n", bold, m->bonus ? "lab total (bonus)" : "lab total", total,
                off);
    }
    fprintf(f, "\n%sTOTAL: %g / %g%s   %s%s%s   (graded in %.1f s)\n", bold, score, max_score, off,
            submission_passed(s) ? green : red,
            submission_passed(s) ? "all checks passed" : "some checks failed", off, s->seconds);
    /* With other labs, a bonus lab is apart from the course's maximum. */
    if (bonus_max > 0 && bonus_max < max_score)
        fprintf(f, "of which bonus: %g / %g; without the bonus: %g / %g\n", bonus, bonus_max,
                score - bonus, max_score - bonus_max);
}

/* The lab's check that carries its build failure (its "runs to the end"). */
static int carries_build(const struct lab_grade *g, const struct graded_check *gc)
{
    return !g->built && gc->check->flags & CHECK_RUNS;
}

static char *check_output(const struct lab_grade *g, const struct graded_check *gc,
                          const struct check_result *res)
{
    char *out = NULL;
    char hint[256] = "";
    if (res->verdict == VERDICT_FAIL && !res->not_graded) read_hint(g, gc, res, hint, sizeof hint);
    if (res->verdict == VERDICT_PASS) {
        if (!res->message[0] || asprintf(&out, "passed\n%s", res->message) < 0)
            out = strdup("passed");
    } else if (asprintf(&out, "%s: %s%s%s%s", verdict_word(res->verdict), res->message,
                        res->problems > 1 ? " (and more problems of this kind)" : "",
                        hint[0] ? "\n→ " : "", hint) < 0) {
        out = NULL;
    }
    /* The build errors once, under the check that carries them. */
    if (carries_build(g, gc) && g->build_log[0] && out) {
        char *with_log;
        if (asprintf(&with_log, "%s\n\nBuild errors:\n%s", out, g->build_log) >= 0) {
            free(out);
            out = with_log;
        }
    }
    return out;
}

/* What a check with hidden runs scores on its public runs alone. */
static double public_points(const struct graded_check *gc)
{
    return gc->public_res.verdict == VERDICT_FAIL ? 0 : gc->max_points;
}

/* A check's hidden runs as their own test, shown after the due date: worth
 * nothing on its own, it takes back the check's points (a negative score)
 * when the hidden runs fail where the public ones passed, so that the
 * tests add up to the total. */
static json_t *hidden_entry(const struct lab_grade *g, const struct graded_check *gc,
                            const char *name, int bonus)
{
    double delta = gc->points - public_points(gc);
    char *detail = check_output(g, gc, &gc->hidden_res), *out = NULL;
    const char *lead =
        delta < 0
            ? "The hidden runs failed where the public runs passed: the check's points are lost."
        : gc->hidden_res.verdict == VERDICT_FAIL
            ? "The hidden runs failed too (the public runs already cost the check its points)."
        : gc->hidden_res.not_made
            ? "Every hidden run that was made passed; the others were not made (an earlier run "
              "hung the way they would)."
            : "Every hidden run passed.";
    if (asprintf(&out, "%s\n%s", lead, detail ? detail : "") < 0) out = NULL;
    char hname[300];
    snprintf(hname, sizeof hname, "%s — hidden runs", name);
    json_t *t = json_pack("{s:s, s:s, s:f, s:f, s:s, s:s, s:s, s:b, s:b}", "name", hname, "key",
                          gc->key, "score", delta, "max_score", 0.0, "status",
                          gc->hidden_res.verdict == VERDICT_FAIL || delta < 0 ? "failed" : "passed",
                          "output", out ? out : "", "visibility", "after_due_date", "timed",
                          (gc->check->flags & CHECK_TIMED) != 0, "bonus", bonus != 0);
    free(detail);
    free(out);
    return t;
}

/* A fixed-answer question, before the due date: visible, it says only
 * whether it was answered (full points when it was); this entry, shown
 * after the due date, says whether the answer is right and takes back the
 * points when it is not. */
static json_t *keyed_entry(const struct graded_check *gc, const char *name, int bonus)
{
    double shown = gc->answered ? gc->max_points : 0, delta = gc->points - shown;
    char hname[300];
    snprintf(hname, sizeof hname, "%s — checked after the due date", name);
    json_t *t = json_pack("{s:s, s:s, s:f, s:f, s:s, s:s, s:s, s:b, s:b}", "name", hname, "key",
                          gc->key, "score", delta, "max_score", 0.0, "status",
                          gc->res.verdict == VERDICT_FAIL ? "failed" : "passed", "output",
                          gc->res.verdict == VERDICT_FAIL ? gc->res.message : "Right.",
                          "visibility", "after_due_date", "timed", 0, "bonus", bonus != 0);
    return t;
}

/* Lab 8's race for Gradescope's leaderboard: sorted by the share of NCCL's
 * busbw, then by busbw. */
static json_t *leaderboard_json(const struct race_result *r)
{
    json_t *lb = json_array();
    json_array_append_new(lb,
                          json_pack("{s:s, s:f, s:s}", "name", "busbw, % of ncclAllReduce", "value",
                                    100.0 * r->own_gbps / r->nccl_gbps, "order", "desc"));
    json_array_append_new(lb, json_pack("{s:s, s:f, s:s}", "name", "busbw (GB/s)", "value",
                                        r->own_gbps, "order", "desc"));
    json_array_append_new(
        lb, json_pack("{s:s, s:f}", "name", "ncclAllReduce busbw (GB/s)", "value", r->nccl_gbps));
    json_array_append_new(
        lb, json_pack("{s:s, s:f}", "name", "message size (MB)", "value", r->bytes / 1e6));
    return lb;
}

int report_results_json(const char *path, const struct submission_grade *s)
{
    json_t *root = json_object(), *tests = json_array();
    double bonus = 0, bonus_max = 0, score = 0, max_score = 0;
    double shown_points = 0, shown_bonus = 0; /* what the visible entries add up to */
    int any_hidden = 0;
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        const struct lab_meta *m = meta_of(s, l);
        score += g->score;
        max_score += g->max_score;
        if (m->bonus) bonus += g->score, bonus_max += g->max_score;
        for (int c = 0; c < g->nchecks; c++) {
            const struct graded_check *gc = &g->checks[c];
            char name[256];
            snprintf(name, sizeof name, "Lab %d%s: %s", g->lab, m->bonus ? " (bonus)" : "",
                     gc->check->title);
            /* With hidden runs, the visible entry is the public runs' verdict
             * alone: nothing of a hidden run (id, command line, parameters)
             * shows before the due date. */
            const struct check_result *shown = gc->hidden_runs ? &gc->public_res : &gc->res;
            double points = gc->hidden_runs ? public_points(gc) : gc->points;
            int keyed = gc->keyed && !gc->hidden_runs && gc->max_points > 0;
            if (keyed) points = gc->answered ? gc->max_points : 0;
            any_hidden |= gc->hidden_runs > 0 || keyed;
            shown_points += points;
            if (m->bonus) shown_bonus += points;
            char *out = keyed ? strdup(gc->answered ? "Answered: whether it is right is shown "
                                                      "after the due date."
                                                    : gc->res.message)
                              : check_output(g, gc, shown);
            json_t *t =
                json_pack("{s:s, s:s, s:f, s:f, s:s, s:s, s:s, s:b, s:b}", "name", name, "key",
                          gc->key, "score", points, "max_score", gc->max_points, "status",
                          keyed                            ? (gc->answered ? "passed" : "failed")
                          : shown->verdict == VERDICT_FAIL ? "failed"
                                                           : "passed",
                          "output", out ? out : "", "visibility", "visible", "timed",
                          (gc->check->flags & CHECK_TIMED) != 0, "bonus", m->bonus != 0);
            free(out);
            if (t) json_array_append_new(tests, t);
            if (gc->hidden_runs) {
                json_t *h = hidden_entry(g, gc, name, m->bonus);
                if (h) json_array_append_new(tests, h);
            } else if (keyed) {
                json_t *h = keyed_entry(gc, name, m->bonus);
                if (h) json_array_append_new(tests, h);
            }
        }
    }
    /* The summary is visible: it adds up the visible entries, not what
     * the hidden runs took back (nor says whether they took anything). */
    double say = any_hidden ? shown_points : score, say_bonus = any_hidden ? shown_bonus : bonus;
    char summary[4096];
    if (bonus_max > 0 && bonus_max < max_score)
        snprintf(summary, sizeof summary,
                 "ncclab grader: %g / %g, and %g / %g bonus, on the %s backend (profile %s)",
                 say - say_bonus, max_score - bonus_max, say_bonus, bonus_max, s->env->backend,
                 s->env->profile->name);
    else
        snprintf(summary, sizeof summary, "ncclab grader: %g / %g on the %s backend (profile %s)",
                 say, max_score, s->env->backend, s->env->profile->name);
    if (any_hidden) {
        size_t u = strlen(summary);
        snprintf(summary + u, sizeof summary - u,
                 " in the visible tests; the hidden runs' tests and whether fixed answers are "
                 "right are shown after the due date");
    }
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_meta *m = meta_of(s, l);
        size_t u = strlen(summary);
        if (m->status == LAB_MISSING)
            snprintf(summary + u, sizeof summary - u, "\nLab %d: nothing handed in",
                     s->labs[l].lab);
        else if (s->labs[l].notes[0]) /* files of the submission the grader did not use */
            snprintf(summary + u, sizeof summary - u, "\nLab %d: %s", s->labs[l].lab,
                     s->labs[l].notes);
    }
    json_object_set_new(root, "score", json_real(score));
    /* The maximum without the bonus labs, their points being extra, when
     * other labs are graded with them. */
    json_object_set_new(root, "max_score",
                        json_real(bonus_max < max_score ? max_score - bonus_max : max_score));
    json_object_set_new(root, "execution_time", json_real(s->seconds));
    json_object_set_new(root, "output", json_string(summary));
    json_object_set_new(root, "visibility", json_string("visible"));
    json_object_set_new(root, "tests", tests);
    if (s->leaderboard && s->race.set && s->race.nccl_gbps > 0)
        json_object_set_new(root, "leaderboard", leaderboard_json(&s->race));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    json_decref(root);
    return rc;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (c >= 32 || c == '\n' || c == '\t')
                fputc(c, f);
            else
                fputc('?', f);
        }
    }
}

int report_junit(const char *path, const struct submission_grade *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ncclab\">\n");
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        int failures = 0;
        for (int c = 0; c < g->nchecks; c++) failures += g->checks[c].res.verdict == VERDICT_FAIL;
        fprintf(f, "  <testsuite name=\"lab%d\" tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n",
                g->lab, g->nchecks, failures, g->seconds);
        for (int c = 0; c < g->nchecks; c++) {
            const struct graded_check *gc = &g->checks[c];
            fprintf(f, "    <testcase classname=\"lab%d\" name=\"", g->lab);
            xml_text(f, gc->check->key);
            fprintf(f, "\">\n");
            char *out = check_output(g, gc, &gc->res);
            if (gc->res.verdict == VERDICT_FAIL) {
                fprintf(f, "      <failure message=\"");
                xml_text(f, gc->check->title);
                fprintf(f, "\">");
                xml_text(f, out ? out : "");
                fprintf(f, "</failure>\n");
            } else if (gc->res.verdict == VERDICT_WARN || gc->res.message[0]) {
                fprintf(f, "      <system-out>");
                xml_text(f, out ? out : "");
                fprintf(f, "</system-out>\n");
            }
            free(out);
            fprintf(f, "    </testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return fclose(f);
}

/* ---- grade.json: the instructor's record of one student ---- */

static json_t *result_json(const struct check_result *r)
{
    return json_pack("{s:s, s:s, s:i, s:b}", "verdict", verdict_word(r->verdict), "message",
                     r->message, "problems", r->problems, "not_graded", r->not_graded != 0);
}

static json_t *lab_json(const struct lab_grade *g, const struct lab_meta *m)
{
    json_t *checks = json_array(), *runs = json_array();
    for (int c = 0; c < g->nchecks; c++) {
        const struct graded_check *gc = &g->checks[c];
        json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:f, s:f, s:o}", "key", gc->key, "check",
                              gc->check->key, "title", gc->check->title, "section",
                              gc->check->section ? gc->check->section : "", "flags",
                              (int)gc->check->flags, "points", gc->points, "max_points",
                              gc->max_points, "result", result_json(&gc->res));
        if (j && gc->hidden_runs) {
            json_object_set_new(j, "hidden_runs", json_integer(gc->hidden_runs));
            json_object_set_new(j, "public", result_json(&gc->public_res));
            json_object_set_new(j, "hidden", result_json(&gc->hidden_res));
        }
        if (j) json_array_append_new(checks, j);
    }
    for (int i = 0; i < m->nruns; i++)
        json_array_append_new(runs,
                              json_pack("{s:s, s:b, s:b}", "label", m->runs[i].label, "hidden",
                                        m->runs[i].hidden, "made", m->runs[i].made));
    return json_pack("{s:i, s:s, s:s, s:b, s:b, s:f, s:f, s:f, s:i, s:i, s:b, s:s, s:s, s:s, "
                     "s:o, s:o}",
                     "lab", g->lab, "title", m->title, "status", lab_status_word(m->status),
                     "bonus", m->bonus, "late", m->late, "score", g->score, "max_score",
                     g->max_score, "seconds", g->seconds, "ran", m->ran, "skipped", m->skipped,
                     "built", g->built, "build_log", g->build_log, "notes", g->notes, "found",
                     m->found, "checks", checks, "runs", runs);
}

int report_grade_json(const char *path, const struct submission_grade *s)
{
    json_t *labs = json_array();
    for (int l = 0; l < s->nlabs; l++) {
        json_t *j = lab_json(&s->labs[l], meta_of(s, l));
        if (j) json_array_append_new(labs, j);
    }
    char problem[2048];
    first_problem(s, problem, sizeof problem);
    json_t *root =
        json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:s, s:s, s:s, s:o}", "format", 1,
                  "id", s->id, "name", s->name, "folder", s->folder, "identity", s->identity,
                  "from", s->from, "submitted_at", s->submitted_at, "notes", s->notes, "seconds",
                  s->seconds, "backend", s->env ? s->env->backend : "", "profile",
                  s->env ? s->env->profile->name : "", "first_problem", problem, "labs", labs);
    if (!root) return -1;
    if (s->race.set)
        json_object_set_new(root, "race",
                            json_pack("{s:f, s:f, s:f, s:i}", "own_gbps", s->race.own_gbps,
                                      "nccl_gbps", s->race.nccl_gbps, "bytes", s->race.bytes,
                                      "nranks", s->race.nranks));
    /* Written whole, then moved into place: a reader never sees half a file. */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = json_dump_file(root, tmp, JSON_INDENT(1) | JSON_ENSURE_ASCII);
    json_decref(root);
    if (rc == 0) rc = rename(tmp, path);
    return rc;
}

static void copy_str(char *dst, size_t len, json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    snprintf(dst, len, "%s", v ? v : "");
}

static double num_of(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static void load_result(json_t *rj, struct check_result *r)
{
    int v = verdict_parse(json_string_value(json_object_get(rj, "verdict")));
    r->verdict = v < 0 ? VERDICT_FAIL : (enum verdict)v;
    copy_str(r->message, sizeof r->message, rj, "message");
    r->problems = (int)num_of(rj, "problems");
    r->not_graded = json_is_true(json_object_get(rj, "not_graded"));
}

static int load_lab(json_t *j, struct lab_grade *g, struct lab_meta *m, char *err, size_t len)
{
    json_t *checks = json_object_get(j, "checks"), *runs = json_object_get(j, "runs");
    int st = lab_status_parse(json_string_value(json_object_get(j, "status")));
    if (!json_is_integer(json_object_get(j, "lab")) || !json_is_array(checks) || st < 0) {
        snprintf(err, len, "a lab without its number, status or checks");
        return -1;
    }
    g->lab = (int)json_integer_value(json_object_get(j, "lab"));
    g->mod = lab_module_find(g->lab);
    g->built = json_is_true(json_object_get(j, "built"));
    g->score = num_of(j, "score");
    g->max_score = num_of(j, "max_score");
    g->seconds = num_of(j, "seconds");
    copy_str(g->build_log, sizeof g->build_log, j, "build_log");
    copy_str(g->notes, sizeof g->notes, j, "notes");
    m->status = (enum lab_status)st;
    copy_str(m->title, sizeof m->title, j, "title");
    copy_str(m->found, sizeof m->found, j, "found");
    m->bonus = json_is_true(json_object_get(j, "bonus"));
    m->late = json_is_true(json_object_get(j, "late"));
    m->ran = (int)num_of(j, "ran");
    m->skipped = (int)num_of(j, "skipped");
    size_t n = json_array_size(checks);
    g->checks = calloc(n ? n : 1, sizeof *g->checks);
    m->loaded_checks = calloc(n + 1, sizeof *m->loaded_checks);
    if (!g->checks || !m->loaded_checks) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    for (size_t c = 0; c < n; c++) {
        json_t *cj = json_array_get(checks, c), *rj = json_object_get(cj, "result");
        struct lab_check *lc = &m->loaded_checks[c];
        const char *k = json_string_value(json_object_get(cj, "check"));
        const char *t = json_string_value(json_object_get(cj, "title"));
        const char *sec = json_string_value(json_object_get(cj, "section"));
        lc->key = strdup(k ? k : "?");
        lc->title = strdup(t ? t : "?");
        lc->section = strdup(sec ? sec : "Common mistakes");
        lc->flags = (unsigned)num_of(cj, "flags");
        struct graded_check *gc = &g->checks[c];
        gc->check = lc;
        copy_str(gc->key, sizeof gc->key, cj, "key");
        gc->points = num_of(cj, "points");
        gc->max_points = num_of(cj, "max_points");
        load_result(rj, &gc->res);
        gc->hidden_runs = (int)num_of(cj, "hidden_runs");
        if (gc->hidden_runs) {
            load_result(json_object_get(cj, "public"), &gc->public_res);
            load_result(json_object_get(cj, "hidden"), &gc->hidden_res);
        }
        g->nchecks++;
    }
    size_t nr = json_array_size(runs);
    m->runs = nr ? calloc(nr, sizeof *m->runs) : NULL;
    for (size_t i = 0; i < nr && m->runs; i++) {
        json_t *rj = json_array_get(runs, i);
        copy_str(m->runs[i].label, sizeof m->runs[i].label, rj, "label");
        m->runs[i].hidden = json_is_true(json_object_get(rj, "hidden"));
        m->runs[i].made = json_is_true(json_object_get(rj, "made"));
        m->nruns++;
    }
    return 0;
}

int grade_json_load(const char *path, struct submission_grade *s, char *err, size_t len)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    memset(s, 0, sizeof *s);
    if (!root) {
        snprintf(err, len, "%s: %s", path, je.text);
        return -1;
    }
    json_t *labs = json_object_get(root, "labs");
    if (!json_is_object(root) || json_integer_value(json_object_get(root, "format")) != 1 ||
        !json_is_array(labs)) {
        snprintf(err, len, "%s: not a grade.json of this grader (format 1)", path);
        json_decref(root);
        return -1;
    }
    copy_str(s->id, sizeof s->id, root, "id");
    snprintf(s->student, sizeof s->student, "%s", s->id);
    copy_str(s->name, sizeof s->name, root, "name");
    copy_str(s->folder, sizeof s->folder, root, "folder");
    copy_str(s->identity, sizeof s->identity, root, "identity");
    copy_str(s->from, sizeof s->from, root, "from");
    copy_str(s->submitted_at, sizeof s->submitted_at, root, "submitted_at");
    copy_str(s->notes, sizeof s->notes, root, "notes");
    s->seconds = num_of(root, "seconds");
    json_t *race = json_object_get(root, "race");
    if (json_is_object(race)) {
        s->race.set = 1;
        s->race.own_gbps = num_of(race, "own_gbps");
        s->race.nccl_gbps = num_of(race, "nccl_gbps");
        s->race.bytes = num_of(race, "bytes");
        s->race.nranks = (int)num_of(race, "nranks");
    }
    size_t n = json_array_size(labs);
    s->labs = calloc(n ? n : 1, sizeof *s->labs);
    s->meta = calloc(n ? n : 1, sizeof *s->meta);
    int rc = s->labs && s->meta ? 0 : -1;
    for (size_t l = 0; l < n && rc == 0; l++) {
        char why[256];
        rc = load_lab(json_array_get(labs, l), &s->labs[l], &s->meta[l], why, sizeof why);
        s->nlabs++;
        if (rc != 0) snprintf(err, len, "%s: lab entry %zu: %s", path, l + 1, why);
    }
    json_decref(root);
    if (rc != 0) {
        submission_free(s);
        return -1;
    }
    submission_totals(s, NULL, NULL);
    return 0;
}

/* One CSV cell. A cell a spreadsheet would read as a formula (starting with
 * = + - @, a tab or a carriage return: student directory names and
 * diagnoses come from submissions) gets a leading apostrophe, which
 * spreadsheets show as text; cells with a comma, quote or line break are
 * quoted. */
void csv_field(FILE *f, const char *s)
{
    int formula = s[0] && strchr("=+-@\t\r", s[0]) != NULL;
    if (!formula && !strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    if (formula) fputc('\'', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
