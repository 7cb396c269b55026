/*
 * cmd_verify.c - `tsf verify FILE|DIR|PATTERN...` (operands expanded as datasets are) and `tsf recover FILE -o OUT`:
 * thin front ends of tsf_verify (walks head, data area, index, bloom filter and tail, decodes every
 * page) and tsf_recover (keeps every chunk whose header and pages are whole and decode, writes a new
 * index and tail). verify exits 2 when any file is damaged and prints how many are.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "outfile.h"

static const char *VERIFY_HELP =
    "usage: tsf verify FILE|DIR|PATTERN... [--max-problems N]\n"
    "A DIR stands for its *.tsfile files (name order), a quoted PATTERN (\"data/*.tsfile\") for its matches.\n"
    "Checks every structure of each file (head, chunk groups, chunks, pages decoded, statistics, index,\n"
    "bloom filter, tail) and prints the problems found with their byte offsets. WARNING lines name\n"
    "inconsistencies that readers tolerate (such as the metadata the Java recovery writes); they do not\n"
    "make a file damaged.\n"
    "  --max-problems N   print at most N problems per file (default 20; all are counted)\n"
    "Exit code 2 when any file is damaged, 3 when a file cannot be read, else 0.\n";

static const char *RECOVER_HELP =
    "usage: tsf recover FILE -o OUT\n"
    "Writes a readable file OUT from FILE (a crashed writer's file without tail, or a file with damaged\n"
    "chunks): keeps every chunk whose header and pages are whole and decode, drops the rest, and writes a\n"
    "new index, bloom filter and tail. Prints what was kept and dropped, and a note per series or chunk\n"
    "that lost data: a chunk group the file ends inside, a dropped chunk and why, an aligned column\n"
    "written as an empty chunk where its chunk was missing.\n"
    "  -o, --output OUT   the new file (must differ from FILE)\n"
    "  --max-notes N      print at most N notes (default 20; all are counted)\n"
    "  -f, --force        replace OUT when it exists (default: refuse)\n";

typedef struct problem_ctx {
    uint64_t shown, max;
    const char *in, *out; /* recover: the "IN -> OUT" line, printed before the first note */
} problem_ctx;

static void recover_title(problem_ctx *c)
{
    if (c->in) printf("%s -> %s\n", c->in, c->out);
    c->in = NULL;
}

static void on_problem(void *ctx, const tsf_problem *p)
{
    problem_ctx *c = ctx;
    if (c->shown++ < c->max)
        printf("  offset %" PRIu64 ": %s%s\n", p->offset, p->warning ? "WARNING: " : "", p->what ? p->what : "?");
}

typedef struct verify_run {
    uint64_t max;
    int nfiles, damaged, unreadable;
} verify_run;

/* Verifies one file of an operand's list (tsf_dataset_list_files). */
static int verify_one(void *ctx, const char *path)
{
    verify_run *v = ctx;
    problem_ctx pc = {0, v->max, NULL, NULL};
    tsf_verify_report rep;
    memset(&rep, 0, sizeof rep);
    tsf_error e = {0};
    v->nfiles++;
    printf("%s\n", path);
    fflush(stdout);
    tsf_status st = tsf_verify(path, on_problem, &pc, &rep, &e);
    if (st == TSF_OK) {
        if (pc.shown > pc.max) printf("  ... %" PRIu64 " more\n", pc.shown - pc.max);
        printf("  ok: %" PRIu64 " chunk groups, %" PRIu64 " chunks, %" PRIu64 " pages, %" PRIu64 " points",
               rep.chunk_groups, rep.chunks, rep.pages, rep.points);
        if (rep.warnings)
            printf("; %" PRIu64 " warning%s (tolerated, not damage)", rep.warnings, rep.warnings > 1 ? "s" : "");
        printf("\n");
    } else if (st == TSF_ECORRUPT || rep.problems) {
        v->damaged++;
        if (pc.shown > pc.max) printf("  ... %" PRIu64 " more\n", pc.shown - pc.max);
        if (!rep.problems) printf("  %s\n", e.message); /* fatal damage reported only through err */
        printf("  DAMAGED: %" PRIu64 " problem%s; read %" PRIu64 " chunk groups, %" PRIu64 " chunks, %" PRIu64
               " pages, %" PRIu64 " points\n",
               rep.problems ? rep.problems : 1, rep.problems > 1 ? "s" : "", rep.chunk_groups, rep.chunks,
               rep.pages, rep.points);
        printf("  to keep every sound chunk: tsf recover %s -o OUT\n", path);
    } else {
        v->unreadable++;
        fflush(stdout);
        cli_err_file("verify", path, e.message[0] ? e.message : tsf_status_name(st));
    }
    return 0;
}

int tsf_cmd_verify(int argc, char **argv)
{
    uint64_t max = 20;
    int nfiles = 0;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(VERIFY_HELP, stdout);
            return CLI_OK;
        } else if (cli_value(&a, "--max-problems")) {
            if (!a.bad && cli_parse_u64(a.val, &max)) {
                cli_err("verify", "--max-problems: \"%s\" is not a count", a.val);
                return CLI_USAGE;
            }
        } else if (cli_positional(&a))
            nfiles++;
        else
            return cli_unknown(&a);
    }
    if (a.bad) return CLI_USAGE;
    if (!nfiles) {
        cli_err("verify", "FILE missing (see tsf verify --help)");
        return CLI_USAGE;
    }
    verify_run v = {max, 0, 0, 0};
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_value(&a, "--max-problems") || !cli_positional(&a)) continue;
        const char *path = a.arg;
        tsf_error e = {0};
        tsf_status st = tsf_dataset_list_files(&path, 1, verify_one, &v, &e);
        if (st) { /* a directory without TsFiles, a pattern without match */
            v.unreadable++;
            fflush(stdout);
            cli_err("verify", "%s", e.message);
        }
    }
    printf("%d file%s checked: %d damaged", v.nfiles, v.nfiles == 1 ? "" : "s", v.damaged);
    if (v.unreadable) printf(", %d unreadable", v.unreadable);
    printf("\n");
    if (fflush(stdout)) return CLI_IO;
    return v.damaged ? CLI_DAMAGED : v.unreadable ? CLI_IO : CLI_OK;
}

static void on_note(void *ctx, const tsf_problem *p)
{
    problem_ctx *c = ctx;
    recover_title(c);
    if (c->shown++ < c->max) printf("  note: offset %" PRIu64 ": %s\n", p->offset, p->what ? p->what : "?");
}

int tsf_cmd_recover(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    uint64_t max = 20;
    int force = 0;
    cli_args a;
    cli_args_init(&a, argc, argv);
    while (cli_next(&a)) {
        if (cli_is(&a, "-h|--help")) {
            fputs(RECOVER_HELP, stdout);
            return CLI_OK;
        } else if (cli_value(&a, "-o|--output")) {
            out = a.val;
        } else if (cli_value(&a, "--max-notes")) {
            if (!a.bad && cli_parse_u64(a.val, &max)) {
                cli_err("recover", "--max-notes: \"%s\" is not a count", a.val);
                return CLI_USAGE;
            }
        } else if (cli_is(&a, "-f|--force")) {
            force = 1;
        } else if (cli_positional(&a)) {
            if (cli_one_file(&a, &in)) return CLI_USAGE;
        } else
            return cli_unknown(&a);
    }
    if (a.bad) return CLI_USAGE;
    if (!in || !out) {
        cli_err("recover", "%s missing (see tsf recover --help)", !in ? "FILE" : "-o OUT");
        return CLI_USAGE;
    }
    struct stat si, so;
    int same = stat(in, &si) == 0 && stat(out, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino;
    int rc = same ? 0 : cli_out_refuse_existing("recover", out, force); /* same file: tsf_recover says so */
    if (rc) return rc;
    FILE *f = fopen(in, "rb");
    if (!f) {
        cli_err("recover", "%s: cannot open: %s", in, strerror(errno));
        return CLI_IO;
    }
    fclose(f);
    tsf_recover_report rep;
    memset(&rep, 0, sizeof rep);
    tsf_error e = {0};
    problem_ctx pc = {0, max, in, out};
    tsf_recover_options ro;
    tsf_recover_options_init(&ro);
    ro.on_note = on_note;
    ro.ctx = &pc;
    int slot = cli_out_track_temp_of(out); /* tsf_recover writes <out>.<pid>.tmp, then renames it */
    tsf_status st = tsf_recover_with(in, out, &ro, &rep, &e);
    cli_out_untrack(slot);
    if (st) {
        fflush(stdout);
        cli_err_file("recover", in, e.message[0] ? e.message : tsf_status_name(st));
        return st == TSF_EINVAL ? CLI_USAGE : cli_exit_code(st);
    }
    recover_title(&pc);
    if (pc.shown > pc.max) printf("  ... %" PRIu64 " more notes\n", pc.shown - pc.max);
    printf("  input:   %s\n", rep.had_tail ? "a complete file" : "no tail");
    printf("  kept:    %" PRIu64 " chunk groups, %" PRIu64 " chunks, %" PRIu64 " points, %" PRIu64 " bytes\n",
           rep.chunk_groups_kept, rep.chunks_kept, rep.points_kept, rep.bytes_kept);
    printf("  dropped: %" PRIu64 " chunk groups, %" PRIu64 " chunks, %" PRIu64 " points, %" PRIu64 " bytes\n",
           rep.chunk_groups_dropped, rep.chunks_dropped, rep.points_dropped, rep.bytes_dropped);
    if (rep.chunks_filled)
        printf("  filled:  %" PRIu64 " empty value chunk%s for aligned columns without one (values there read as null)\n",
               rep.chunks_filled, rep.chunks_filled > 1 ? "s" : "");
    if (fflush(stdout)) return CLI_IO;
    return CLI_OK;
}
