/* test.c - the harness behind test.h. */
#include <stdlib.h>

#include "test.h"

int tsf_test_failures;
int tsf_test_passed, tsf_test_failed, tsf_test_skipped;
static int skipped_now; /* tests are single-threaded; this is test-binary state, not library state */

void tsf_test_skip(const char *why)
{
    fprintf(stderr, "  skipped: %s\n", why);
    skipped_now = 1;
}

void tsf_test_run(const char *name, void (*fn)(void))
{
    tsf_test_failures = 0;
    skipped_now = 0;
    fn();
    if (tsf_test_failures) {
        tsf_test_failed++;
        printf("FAIL %s (%d checks)\n", name, tsf_test_failures);
    } else if (skipped_now) {
        tsf_test_skipped++;
        printf("SKIP %s\n", name);
    } else {
        tsf_test_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

int tsf_test_finish(void)
{
    printf("%d passed, %d failed, %d skipped\n", tsf_test_passed, tsf_test_failed, tsf_test_skipped);
    if (tsf_test_failed) return 1;
    if (tsf_test_skipped && !tsf_test_passed) return 77;
    return 0;
}

void tsf_test_hexdiff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 8; i++)
        if (a[i] != b[i]) {
            fprintf(stderr, "  at %zu: %02x != %02x\n", i, a[i], b[i]);
            shown++;
        }
}

uint64_t tsf_test_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

const char *tsf_test_data_dir(void)
{
    return TSF_TEST_DATA_DIR;
}

uint8_t *tsf_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    uint8_t *buf = malloc((size_t)sz + 1);
    if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *len = (size_t)sz;
    return buf;
}

int tsf_test_mem_write(void *ud, const void *data, size_t len)
{
    tsf_test_membuf *m = ud;
    if (m->len + len > m->cap) {
        size_t nc = m->cap ? m->cap : 4096;
        while (nc < m->len + len) nc *= 2;
        uint8_t *np = realloc(m->p, nc);
        if (!np) return 1;
        m->p = np;
        m->cap = nc;
    }
    memcpy(m->p + m->len, data, len);
    m->len += len;
    return 0;
}
