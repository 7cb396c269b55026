/*
 * golden_rows.h - reads every series of a TsFile through the reader API (one query over all devices and
 * series) into golden CSV rows (golden_csv.h), opened by path (mode 0), from memory (1) or through pread
 * callbacks (2), on codec path cp with batches of `batch` rows. Shared by the golden-file and recovery
 * suites.
 */
#ifndef TSF_TEST_GOLDEN_ROWS_H
#define TSF_TEST_GOLDEN_ROWS_H

#include "../format/golden_csv.h"

typedef struct mem_src {
    const uint8_t *p;
    size_t n;
} mem_src;

static inline int gcsv_mem_pread(void *ud, void *buf, size_t len, uint64_t off)
{
    const mem_src *m = ud;
    if (off > m->n || len > m->n - off) return -1;
    memcpy(buf, m->p + off, len);
    return 0;
}

/* Reads the whole file into rows; returns 0 or -1 with why. checked: 1 or 0 sets
 * tsf_reader_options.checked, -1 keeps the library default. */
static inline int gcsv_read_rows(const char *path, const uint8_t *file, size_t len, int mode, tsf_codec_path cp,
                                 size_t batch, int java, int checked, void (*on_open)(tsf_reader *r), gcsv *rows,
                                 char *why, size_t whycap)
{
    tsf_reader_options ro;
    tsf_reader_options_init(&ro);
    ro.path = cp;
    if (checked >= 0) ro.checked = checked;
    tsf_reader *r = NULL;
    tsf_error e = {0};
    tsf_status st;
    mem_src ms = {file, len};
    if (mode == 0) {
        st = tsf_reader_open(&r, path, &ro, &e);
    } else if (mode == 1) {
        st = tsf_reader_open_memory(&r, file, len, &ro, &e);
    } else {
        tsf_read_callbacks cb = {sizeof cb, gcsv_mem_pread, len, &ms};
        st = tsf_reader_open_callbacks(&r, &cb, &ro, &e);
    }
    if (st) {
        snprintf(why, whycap, "open: %s %s", tsf_status_name(st), e.message);
        return -1;
    }
    tsf_query_options qo;
    tsf_query_options_init(&qo);
    qo.batch_size = batch;
    tsf_query *q = NULL;
    const tsf_batch *b;
    gcsv_buf fmt = {0};
    size_t *dev_off = NULL, nd = tsf_reader_device_count(r);
    if (on_open) on_open(r);
    if ((st = tsf_query_open(r, &qo, &q, &e))) goto out;
    dev_off = calloc(nd ? nd : 1, sizeof *dev_off);
    for (size_t i = 0; i < nd; i++) {
        tsf_device_info di;
        tsf_reader_device(r, i, &di, NULL);
        dev_off[i] = gcsv_str(rows, di.name, strlen(di.name));
    }
    int64_t last_time = 0;
    size_t last_dev = (size_t)-1;
    while ((st = tsf_query_next(q, &b, &e)) == TSF_OK && b) {
        if (b->nrows == 0 || b->nrows > batch) {
            st = TSF_ECORRUPT;
            snprintf(e.message, sizeof e.message, "batch of %zu rows (batch size %zu)", b->nrows, batch);
            break;
        }
        for (size_t c = 0; c < b->ncolumns; c++) {
            const tsf_column_batch *col = &b->columns[c];
            size_t meas = gcsv_str(rows, col->name, strlen(col->name));
            const char *tn = tsf_type_name(col->type);
            for (size_t i = 0; i < b->nrows; i++) {
                if (b->device == last_dev && c == 0 && i == 0 && b->times[0] <= last_time) {
                    st = TSF_ECORRUPT;
                    snprintf(e.message, sizeof e.message, "times of device %zu not ascending across batches", b->device);
                }
                if (!((col->validity[i >> 3] >> (i & 7)) & 1)) continue;
                gcsv_format(&fmt, col->type, col->values, i, java);
                gcsv_row *row = gcsv_add(rows);
                row->dev = dev_off[b->device];
                row->meas = meas;
                row->time = b->times[i];
                row->type = gcsv_str(rows, java ? tn : "", java ? strlen(tn) : 0);
                row->val = gcsv_str(rows, fmt.p, fmt.len);
            }
        }
        last_dev = b->device;
        last_time = b->times[b->nrows - 1];
        if (st) break;
    }
out:
    if (st) snprintf(why, whycap, "%s %s", tsf_status_name(st), e.message);
    tsf_query_close(q);
    tsf_reader_close(r);
    free(dev_off);
    free(fmt.p);
    return st ? -1 : 0;
}

/* 1 if a FLOAT/DOUBLE cell ("0x" + 8 or 16 hex digits of its bits, as golden_csv.h keeps them) is a NaN. */
static inline int gcsv_nan_cell(const char *v)
{
    if (strncmp(v, "0x", 2)) return 0;
    unsigned long long b = strtoull(v + 2, NULL, 16);
    if (strlen(v) == 10) return ((b >> 23) & 0xff) == 0xff && (b & 0x7fffff);
    return ((b >> 52) & 0x7ff) == 0x7ff && (b & 0xfffffffffffffull);
}

#endif
