#include "report.h"

#include <jansson.h>
#include <string.h>

static const char *verdict_word(enum verdict v)
{
    return v == VERDICT_PASS ? "PASS" : v == VERDICT_WARN ? "WARN" : "FAIL";
}

int submission_passed(const struct submission_grade *s)
{
    for (int l = 0; l < s->nlabs; l++)
        for (int c = 0; c < s->labs[l].nchecks; c++)
            if (s->labs[l].checks[c].res.verdict == VERDICT_FAIL) return 0;
    return s->nlabs > 0;
}

/* Where to read when a check fails: handouts/labN.md, section "...". */
static void read_hint(const struct lab_grade *g, const struct graded_check *gc, char *buf,
                      size_t len)
{
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

void report_terminal(FILE *f, const struct submission_grade *s, int color, int width)
{
    const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "";
    const char *yellow = color ? "\033[33m" : "", *bold = color ? "\033[1m" : "";
    const char *off = color ? "\033[0m" : "";
    const struct profile *p = s->env->profile;
    fprintf(f, "%sncclab grader%s%s%s — backend %s, profile %s (busbw ceiling %.0f GB/s%s)\n", bold,
            off, s->student[0] ? " — " : "", s->student, s->env->backend, p->name, p->ceiling_gbps,
            p->memcpy_gbps > 0 ? ", from this machine's memcpy" : "");
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        int ran = 0, skipped = 0;
        for (int i = 0; i < g->nruns; i++) {
            if (g->runs[i].excluded) continue;
            if (g->runs[i].skipped)
                skipped++;
            else
                ran++;
        }
        fprintf(f, "\n%sLab %d: %s%s   (%d runs%s, %.1f s)\n", bold, g->lab, g->mod->title, off,
                ran, skipped ? ", some skipped" : "", g->seconds);
        if (!g->built) {
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
                    read_hint(g, gc, hint, sizeof hint);
                    fprintf(f, "      → %s\n", hint);
                }
            }
        }
        char total[32];
        snprintf(total, sizeof total, "%g / %g", g->score, g->max_score);
        fprintf(f, "  %s%-52s %9s%s\n", bold, "lab total", total, off);
    }
    fprintf(f, "\n%sTOTAL: %g / %g%s   %s%s%s   (graded in %.1f s)\n", bold, s->score, s->max_score,
            off, submission_passed(s) ? green : red,
            submission_passed(s) ? "all checks passed" : "some checks failed", off, s->seconds);
}

static char *check_output(const struct lab_grade *g, const struct graded_check *gc)
{
    char *out = NULL;
    char hint[256] = "";
    if (gc->res.verdict == VERDICT_FAIL && !gc->res.not_graded) read_hint(g, gc, hint, sizeof hint);
    if (gc->res.verdict == VERDICT_PASS) {
        if (!gc->res.message[0] || asprintf(&out, "passed\n%s", gc->res.message) < 0)
            out = strdup("passed");
    } else if (asprintf(&out, "%s: %s%s%s%s", verdict_word(gc->res.verdict), gc->res.message,
                        gc->res.problems > 1 ? " (and more problems of this kind)" : "",
                        hint[0] ? "\n→ " : "", hint) < 0) {
        out = NULL;
    }
    if (!g->built && out) {
        char *with_log;
        if (asprintf(&with_log, "%s\n\nBuild errors:\n%s", out, g->build_log) >= 0) {
            free(out);
            out = with_log;
        }
    }
    return out;
}

int report_results_json(const char *path, const struct submission_grade *s)
{
    json_t *root = json_object(), *tests = json_array();
    for (int l = 0; l < s->nlabs; l++) {
        const struct lab_grade *g = &s->labs[l];
        for (int c = 0; c < g->nchecks; c++) {
            const struct graded_check *gc = &g->checks[c];
            char name[256];
            snprintf(name, sizeof name, "Lab %d: %s", g->lab, gc->check->title);
            char *out = check_output(g, gc);
            char key[128];
            snprintf(key, sizeof key, "lab%d.%s", g->lab, gc->check->key);
            json_t *t = json_pack("{s:s, s:s, s:f, s:f, s:s, s:s, s:s, s:b}", "name", name, "key",
                                  key, "score", gc->points, "max_score", gc->max_points, "status",
                                  gc->res.verdict == VERDICT_FAIL ? "failed" : "passed", "output",
                                  out ? out : "", "visibility", "visible", "timed",
                                  (gc->check->flags & CHECK_TIMED) != 0);
            free(out);
            if (t) json_array_append_new(tests, t);
        }
    }
    char summary[4096];
    snprintf(summary, sizeof summary, "ncclab grader: %g / %g on the %s backend (profile %s)",
             s->score, s->max_score, s->env->backend, s->env->profile->name);
    json_object_set_new(root, "score", json_real(s->score));
    json_object_set_new(root, "max_score", json_real(s->max_score));
    json_object_set_new(root, "execution_time", json_real(s->seconds));
    for (int l = 0; l < s->nlabs; l++) /* files of the submission the grader did not use */
        if (s->labs[l].notes[0])
            snprintf(summary + strlen(summary), sizeof summary - strlen(summary), "\nLab %d: %s",
                     s->labs[l].lab, s->labs[l].notes);
    json_object_set_new(root, "output", json_string(summary));
    json_object_set_new(root, "visibility", json_string("visible"));
    json_object_set_new(root, "tests", tests);
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
            char *out = check_output(g, gc);
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

int report_gradebook(const char *path, const struct submission_grade *subs, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("student", f);
    /* Columns come from the first submission: every one is graded on the same labs. */
    if (n > 0) {
        for (int l = 0; l < subs[0].nlabs; l++) {
            const struct lab_grade *g = &subs[0].labs[l];
            for (int c = 0; c < g->nchecks; c++) fprintf(f, ",%s", g->checks[c].key);
            fprintf(f, ",lab%d", g->lab);
        }
    }
    fputs(",total,max_score,all_passed,first_problem\n", f);
    for (int i = 0; i < n; i++) {
        const struct submission_grade *s = &subs[i];
        csv_field(f, s->student);
        const char *first = "";
        for (int l = 0; l < s->nlabs; l++) {
            const struct lab_grade *g = &s->labs[l];
            for (int c = 0; c < g->nchecks; c++) {
                fprintf(f, ",%g", g->checks[c].points);
                if (!*first && g->checks[c].res.verdict == VERDICT_FAIL)
                    first = g->checks[c].res.message;
            }
            fprintf(f, ",%g", g->score);
        }
        fprintf(f, ",%g,%g,%d,", s->score, s->max_score, submission_passed(s));
        csv_field(f, first);
        fputc('\n', f);
    }
    return fclose(f);
}
