/*
 * gen_corpus.c - writes the seed corpora of the fuzz harnesses (doc/fuzzing.md) into
 * <dir>/<harness>/gen-*: valid page streams of every type each encoding supports, made by our own
 * encoders (scalar path), with smooth, edge-case and random values, plus truncated, byte-flipped and
 * miscounted variants; hand-built REGULAR streams (spec §3.5, decode-only encoding); compressed pages
 * in every codec for the decompression harness. Deterministic (fixed seeds), so regenerating after a
 * codec change shows up as a reviewable diff. Never uses golden-file bytes.
 * Build and run: fuzz/gen_corpus.sh [build-dir]  (links the static library of that build).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

static const char *g_root;
static size_t g_files, g_bytes;

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Creates <root>/<name>/ and removes the gen-* files a previous run left there. */
static void prepare_dir(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_root, name);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "gen-", 4) != 0) continue;
        char f[1300];
        snprintf(f, sizeof f, "%s/%s", path, e->d_name);
        unlink(f);
    }
    closedir(d);
}

static void write_seed(const char *dir, const char *name, const uint8_t *a, size_t na, const uint8_t *b,
                       size_t nb)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/%s/gen-%s", g_root, dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    if ((na && fwrite(a, 1, na, f) != na) || (nb && fwrite(b, 1, nb, f) != nb)) {
        perror(path);
        exit(1);
    }
    fclose(f);
    g_files++;
    g_bytes += na + nb;
}

/* ---- values --------------------------------------------------------------------------------------- */

enum { PAT_SMOOTH, PAT_EDGE, PAT_RANDOM, PAT_COUNT };
static const char *const PAT_NAMES[] = {"smooth", "edge", "random"};
static const size_t PAT_N[] = {200, 40, 100};

static char g_text[FZ_MAX_VALUES * 64]; /* backing store of generated strings */

/* Fills n values of type t following pattern p. Returns the payload bytes (binary types). */
static size_t make_values(tsf_type t, int p, size_t n, void *out, uint64_t seed)
{
    uint64_t s = seed;
    size_t payload = 0, tp = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(&s);
        int64_t iv;
        double dv;
        if (p == PAT_SMOOTH) {
            iv = 1700000000 + (int64_t)i * 1000 + (int64_t)(r % 7);
            dv = (double)((int64_t)(i * 37 % 1000) - 300) / 100.0;
        } else if (p == PAT_EDGE) {
            static const int64_t ie[] = {0,         -1,        1,   INT32_MIN, INT32_MAX,
                                         INT64_MIN, INT64_MAX, 255, -256,      1 << 20};
            static const double de[] = {0.0,     -0.0,   1.0,      -1.5,    1e300,
                                        -1e-300, 3.4e38, 1.17e-38, 123.456, 5e-324};
            iv = ie[i % 10];
            dv = i % 13 == 11 ? NAN : i % 13 == 12 ? (i & 1 ? INFINITY : -INFINITY) : de[i % 10];
        } else {
            iv = (int64_t)r;
            memcpy(&dv, &r, sizeof dv);
        }
        switch (t) {
        case TSF_BOOLEAN:
            ((uint8_t *)out)[i] = p == PAT_SMOOTH ? (uint8_t)((i / 9) & 1) : (uint8_t)(r & 1);
            break;
        case TSF_INT32:
        case TSF_DATE:
            ((int32_t *)out)[i] = p == PAT_SMOOTH ? (int32_t)(iv % 100000) : (int32_t)iv;
            break;
        case TSF_INT64:
        case TSF_TIMESTAMP:
            ((int64_t *)out)[i] = p == PAT_SMOOTH ? iv * 1000 : iv;
            break;
        case TSF_FLOAT: {
            float f = (float)dv;
            if (p == PAT_RANDOM) memcpy(&f, &r, sizeof f);
            ((float *)out)[i] = f;
            break;
        }
        case TSF_DOUBLE:
            ((double *)out)[i] = dv;
            break;
        default: {
            size_t len;
            char *b = g_text + tp;
            if (p == PAT_SMOOTH) {
                static const char *const words[] = {"north", "south", "east", "west", "up"};
                len = (size_t)snprintf(b, 64, "%s", words[i % 5]);
            } else if (p == PAT_EDGE) {
                static const char *const e[] = {"", "a", "\xe6\x97\xa5\xe6\x9c\xac", "null",
                                                "0123456789012345678901234567890123456789012345678"};
                len = (size_t)snprintf(b, 64, "%s", e[i % 5]);
            } else {
                len = r % 40;
                for (size_t k = 0; k < len; k++) b[k] = (char)rnd(&s);
            }
            ((tsf_bytes *)out)[i].data = (const uint8_t *)b;
            ((tsf_bytes *)out)[i].len = len;
            tp += len;
            payload += len;
        }
        }
    }
    return payload;
}

/* ---- per-encoding seeds --------------------------------------------------------------------------- */

static int type_index(tsf_encoding enc, int encode, tsf_type t)
{
    tsf_type list[FZ_NTYPES];
    size_t k = fz_types_of(enc, encode, list);
    for (size_t i = 0; i < k; i++)
        if (list[i] == t) return (int)i;
    return -1;
}

static void decode_seed(const char *dir, const char *name, int sel, size_t n, const uint8_t *s, size_t len)
{
    uint8_t head[3] = {(uint8_t)sel, (uint8_t)(n & 0xff), (uint8_t)(n >> 8)};
    write_seed(dir, name, head, 3, s, len);
}

static void seeds_for(const tsf_codec *c, tsf_encoding enc, const char *ename)
{
    char ddir[64], rdir[64], name[128];
    snprintf(ddir, sizeof ddir, "decode_%s_fuzzer", ename);
    snprintf(rdir, sizeof rdir, "roundtrip_%s_fuzzer", ename);
    int has_rt = enc != TSF_ENC_REGULAR;
    prepare_dir(ddir);
    if (has_rt) prepare_dir(rdir);

    /* always one raw seed, so the corpus exists even before the codec does */
    uint8_t raw[16];
    for (int i = 0; i < 16; i++) raw[i] = (uint8_t)(i * 17);
    decode_seed(ddir, "raw", 0, 4, raw, sizeof raw);
    if (has_rt) {
        uint8_t rt[17] = {0};
        memcpy(rt + 1, raw, 16);
        write_seed(rdir, "raw", rt, sizeof rt, NULL, 0);
    }

    static uint8_t values[FZ_MAX_VALUES * 16];
    for (size_t ti = 0; ti < FZ_NTYPES; ti++) {
        tsf_type t = FZ_TYPES[ti];
        const char *tn = tsf_type_name(t);
        int dsel = type_index(enc, 0, t), esel = type_index(enc, 1, t);
        for (int p = 0; p < PAT_COUNT; p++) {
            size_t n = PAT_N[p];
            size_t payload = make_values(t, p, n, values, 1000 * ti + (uint64_t)p);
            /* round-trip seed: the harness's own value layout */
            if (has_rt && esel >= 0) {
                uint8_t sel = (uint8_t)esel;
                snprintf(name, sizeof name, "%s-%s", tn, PAT_NAMES[p]);
                if (fz_is_binary(t)) {
                    static uint8_t buf[FZ_MAX_VALUES * 65];
                    size_t k = 0;
                    const tsf_bytes *v = (const tsf_bytes *)values;
                    for (size_t i = 0; i < n; i++) {
                        buf[k++] = (uint8_t)v[i].len;
                        memcpy(buf + k, v[i].data, v[i].len);
                        k += v[i].len;
                    }
                    write_seed(rdir, name, &sel, 1, buf, k);
                } else {
                    write_seed(rdir, name, &sel, 1, values, n * tsf_type_size(t));
                }
            }
            /* decode seeds: a valid stream and damaged variants */
            if (dsel < 0 || !tsf_codec_can_encode(t, enc)) continue;
            size_t cap = tsf_codec_encode_bound(t, enc, n, payload), w = 0;
            uint8_t *stream = malloc(cap ? cap : 1);
            tsf_error err;
            if (tsf_codec_encode(c, t, enc, values, n, stream, cap, &w, &err) != TSF_OK) {
                fprintf(stderr, "encode %s %s: %s\n", ename, tn, err.message);
                free(stream);
                continue;
            }
            snprintf(name, sizeof name, "%s-%s", tn, PAT_NAMES[p]);
            decode_seed(ddir, name, dsel, n, stream, w);
            if (p == PAT_SMOOTH) {
                snprintf(name, sizeof name, "%s-truncated", tn);
                decode_seed(ddir, name, dsel, n, stream, w / 2);
                snprintf(name, sizeof name, "%s-overcount", tn);
                decode_seed(ddir, name, dsel, n + 5, stream, w);
            } else if (p == PAT_RANDOM && w > 0) {
                uint64_t s = 7 + ti;
                for (int k = 0; k < 3; k++) stream[rnd(&s) % w] ^= (uint8_t)(1u << (rnd(&s) % 8));
                snprintf(name, sizeof name, "%s-flipped", tn);
                decode_seed(ddir, name, dsel, n, stream, w);
            }
            free(stream);
        }
    }
}

/* REGULAR (spec §3.5): blocks of [isMissing u8][(bitmapLen i32 BE, bitmap)][writeIndex i32 BE]
 * [minDelta][first], both of the type's width, big-endian. */
static size_t regular_block(uint8_t *b, int is64, int32_t count, int64_t delta, int64_t first,
                            const uint8_t *bitmap, int32_t bitmap_len)
{
    size_t k = 0;
    b[k++] = bitmap ? 1 : 0;
    if (bitmap) {
        for (int i = 3; i >= 0; i--) b[k++] = (uint8_t)((uint32_t)bitmap_len >> (8 * i));
        memcpy(b + k, bitmap, (size_t)bitmap_len);
        k += (size_t)bitmap_len;
    }
    for (int i = 3; i >= 0; i--) b[k++] = (uint8_t)((uint32_t)count >> (8 * i));
    int w = is64 ? 8 : 4;
    for (int i = w - 1; i >= 0; i--) b[k++] = (uint8_t)((uint64_t)delta >> (8 * i));
    for (int i = w - 1; i >= 0; i--) b[k++] = (uint8_t)((uint64_t)first >> (8 * i));
    return k;
}

static void regular_seeds(void)
{
    const char *dir = "decode_regular_fuzzer";
    tsf_type types[] = {TSF_INT32, TSF_INT64, TSF_DATE, TSF_TIMESTAMP};
    for (size_t ti = 0; ti < 4; ti++) {
        tsf_type t = types[ti];
        int sel = type_index(TSF_ENC_REGULAR, 0, t);
        if (sel < 0) continue;
        int is64 = t == TSF_INT64 || t == TSF_TIMESTAMP;
        const char *tn = tsf_type_name(t);
        uint8_t b[512];
        char name[128];
        size_t k = regular_block(b, is64, 100, 1000, 1700000000, NULL, 0);
        snprintf(name, sizeof name, "%s-one-block", tn);
        decode_seed(dir, name, sel, 100, b, k);
        k = regular_block(b, is64, 128, 5, -40, NULL, 0);
        k += regular_block(b + k, is64, 128, 5, 600, NULL, 0);
        k += regular_block(b + k, is64, 44, 5, 1240, NULL, 0);
        snprintf(name, sizeof name, "%s-three-blocks", tn);
        decode_seed(dir, name, sel, 300, b, k);
        /* 20 slots, every third missing: bits set for present points (LSB-first BitSet bytes) */
        uint8_t bm[3] = {0};
        size_t present = 0;
        for (int i = 0; i < 20; i++)
            if (i % 3 != 2) {
                bm[i / 8] |= (uint8_t)(1u << (i % 8));
                present++;
            }
        k = regular_block(b, is64, 20, 10, 0, bm, 3);
        snprintf(name, sizeof name, "%s-missing", tn);
        decode_seed(dir, name, sel, present, b, k);
        snprintf(name, sizeof name, "%s-truncated", tn);
        decode_seed(dir, name, sel, present, b, k - 3);
    }
}

/* ---- compression seeds ---------------------------------------------------------------------------- */

static void compression_seeds(const tsf_codec *c)
{
    prepare_dir("decompress_fuzzer");
    prepare_dir("compress_roundtrip_fuzzer");
    /* inputs: a PLAIN INT64 page body, text, zeros, a short string, nothing */
    static uint8_t inputs[4][4096];
    size_t lens[4];
    int64_t v[300];
    for (int i = 0; i < 300; i++) v[i] = 1700000000000 + i * 1000 + i % 7;
    size_t w = 0;
    if (tsf_codec_can_encode(TSF_INT64, TSF_ENC_PLAIN) &&
        tsf_codec_encode(c, TSF_INT64, TSF_ENC_PLAIN, v, 300, inputs[0], sizeof inputs[0], &w, NULL) ==
            TSF_OK) {
        lens[0] = w;
    } else {
        memcpy(inputs[0], v, sizeof v);
        lens[0] = sizeof v;
    }
    lens[1] = 0;
    for (int i = 0; lens[1] < 3000; i++)
        lens[1] +=
            (size_t)snprintf((char *)inputs[1] + lens[1], 64, "row %d,sensor-%d,%.2f;", i, i % 5, i * 0.25);
    memset(inputs[2], 0, 2000);
    lens[2] = 2000;
    memcpy(inputs[3], "TsFile", 6);
    lens[3] = 6;
    static const char *const in_names[] = {"int64page", "text", "zeros", "short"};

    for (size_t ci = 0; ci < FZ_NCODECS; ci++) {
        tsf_compression comp = FZ_CODECS[ci];
        const char *cn = tsf_compression_name(comp);
        char name[128];
        for (int k = 0; k < 5; k++) {
            const uint8_t *src = k < 4 ? inputs[k] : NULL;
            size_t n = k < 4 ? lens[k] : 0;
            uint8_t sel = (uint8_t)ci;
            snprintf(name, sizeof name, "%s-%s", cn, k < 4 ? in_names[k] : "empty");
            if (k != 2) write_seed("compress_roundtrip_fuzzer", name, &sel, 1, src, n);
            size_t cap = tsf_compress_bound(comp, n), zw = 0;
            uint8_t *z = malloc(cap ? cap : 1);
            if (tsf_compress(comp, src, n, z, cap, &zw, NULL) != TSF_OK) {
                free(z);
                continue;
            }
            uint8_t head[5] = {sel, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
            write_seed("decompress_fuzzer", name, head, 5, z, zw);
            if (k == 1 && zw > 4) {
                snprintf(name, sizeof name, "%s-text-truncated", cn);
                write_seed("decompress_fuzzer", name, head, 5, z, zw - 3);
                head[1] ^= 1; /* claimed size off by one */
                snprintf(name, sizeof name, "%s-text-wrongsize", cn);
                write_seed("decompress_fuzzer", name, head, 5, z, zw);
            }
            free(z);
        }
    }
}

int main(int argc, char **argv)
{
    g_root = argc > 1 ? argv[1] : "fuzz/corpora";
    if (mkdir(g_root, 0755) != 0 && errno != EEXIST) {
        perror(g_root);
        return 1;
    }
    tsf_codec_options o;
    tsf_codec_options_init(&o);
    o.path = TSF_PATH_SCALAR;
    tsf_codec *c = NULL;
    if (tsf_codec_open(&c, &o, NULL) != TSF_OK) return 1;
    static const struct {
        tsf_encoding e;
        const char *name;
    } encs[] = {
        {TSF_ENC_PLAIN, "plain"},      {TSF_ENC_DICTIONARY, "dictionary"}, {TSF_ENC_RLE, "rle"},
        {TSF_ENC_TS_2DIFF, "ts2diff"}, {TSF_ENC_GORILLA, "gorilla"},       {TSF_ENC_GORILLA_V1, "gorilla_v1"},
        {TSF_ENC_ZIGZAG, "zigzag"},    {TSF_ENC_CHIMP, "chimp"},           {TSF_ENC_SPRINTZ, "sprintz"},
        {TSF_ENC_RLBE, "rlbe"},        {TSF_ENC_REGULAR, "regular"}};
    for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++) seeds_for(c, encs[i].e, encs[i].name);
    regular_seeds();
    compression_seeds(c);
    tsf_codec_close(c);
    printf("wrote %zu seed files, %zu bytes, under %s\n", g_files, g_bytes, g_root);
    return 0;
}
