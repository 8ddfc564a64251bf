/* A baseline JPEG decoded at 1/8 or 1/4 of its size on two cores (jpeg.py): libjpeg decodes a scan's Huffman
 * codes one after another, and a JPEG without restart markers (most) gives it no place to split them. Here the
 * second half is decoded from its middle byte at once, as if an MCU started there: Huffman codes fall into
 * step with the true ones within a few blocks, and wherever the first half's decoder, going on past the
 * middle, starts an MCU at a bit where the second's did, everything after is the same decode, but for the DC
 * predictions, which are a sum from the start and are mended by adding the difference. Each 8x8 block becomes
 * the means of the parts it covers in the output (the inverse DCT averaged over each): 1x1 or 2x2 of them for
 * luma, and for subsampled chroma as many more as it is subsampled, as libjpeg scales it, so that no component
 * needs upsampling; then YCbCr becomes RGB. */
#define PY_SSIZE_T_CLEAN /* setup.py defines Py_LIMITED_API: only stable-ABI calls below */
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifndef _WIN32
#include <pthread.h>
#endif

#define LOOK 10            /* bits of a Huffman code found by one table lookup; longer ones are searched */
#define SYNC_RECORDS 4096  /* MCUs of the second half whose start is kept: the halves meet within a few */
#define RESTARTS 1024      /* times the second half starts again after a code error; each costs an MCU or so */
#define SETTLED 16         /* MCUs after which an error in the second half is the data's, not its being out of step */

typedef struct {
    uint16_t look[1 << LOOK]; /* (length << 8) | symbol, 0 where the code is longer than LOOK */
    int32_t fast[1 << LOOK];  /* an AC code and its value's bits both within LOOK bits: (value << 16) | (run << 8)
                               * | their length; 0 for the others, decoded the long way */
    int32_t maxcode[17];      /* the largest code of each length, -1 for none */
    int32_t first[17];        /* index in vals of the first code of each length, minus that code */
    uint8_t vals[256];
    int used;                 /* a table with no codes cannot be used */
} Huff;

typedef struct {
    int h, v;           /* blocks in an MCU, across and down */
    const Huff *dc, *ac;
    int nx, ny;         /* outputs a block, across and down: 1, 2 or 4 */
    float w[64][16];    /* an AC coefficient's weight (quantisation included) in each output's mean, by zigzag index */
    float dc_weight;    /* the same for the DC coefficient: added to all outputs alike */
} Comp;

/* A reader of the scan's data as it is stored: a byte 0xFF is followed by a zero byte that is not data. Past
 * the data's end (the marker after it) it reads zeros; the data's end is checked after each MCU. */
typedef struct {
    const uint8_t *p, *end; /* the next byte to load, and the marker after the data */
    uint64_t buf;           /* bits, first at the top */
    int bits;               /* how many of them are valid */
    uint64_t at;            /* the data's bytes (without the zeros after 0xFF) before the first loaded */
    uint64_t loaded;        /* and how many have been loaded since */
} Bits;

typedef struct {
    const uint8_t *data, *end; /* the scan's data as stored, and the marker after it */
    uint64_t nbits;            /* its length, without the zero bytes after 0xFF */
    Comp comp[3];
    int ncomp, nblocks;    /* blocks in an MCU */
    int block_comp[6];     /* the component of each block of an MCU */
    int block_index[6];    /* and its place among that component's blocks */
    int block_at[6];       /* where its outputs start among the MCU's */
    int mcu_outputs;
    long total, mcux;      /* MCUs in the scan, and across it */
    int hmax, vmax;        /* an MCU's size in blocks of the luma */
    uint8_t *pixels;       /* the picture, RGB or grey */
    int width, height;     /* its size: the image's at n/8, rounded up */
} Scan;

/* A decoder's state between MCUs. */
typedef struct {
    Bits b;
    long m;              /* the next MCU */
    int32_t pred[3];     /* DC predictions (sums of differences, wrapping: libjpeg keeps 16 bits of them) */
    float *out;          /* the second half's blocks: n * n quarter means but for the DC, MCU after MCU, */
    int32_t *dc;         /* and each DC coefficient as decoded; NULL: MCUs go to the picture at once */
} Run;

static int huff_build(Huff *t, const uint8_t *counts, const uint8_t *vals)
{
    int total = 0;
    for (int l = 0; l < 16; l++)
        total += counts[l];
    memset(t, 0, sizeof *t);
    if (total == 0)
        return 0;
    if (total > 256)
        return -1;
    memcpy(t->vals, vals, (size_t)total);
    int32_t code = 0;
    int k = 0;
    for (int l = 1; l <= 16; l++) {
        t->first[l] = k - code;
        for (int i = 0; i < counts[l - 1]; i++, k++, code++) {
            if (code >= (1 << l))
                return -1; /* more codes of this length than there is room for: not a prefix code */
            if (l <= LOOK)
                for (int j = 0; j < (1 << (LOOK - l)); j++) {
                    int index = (code << (LOOK - l)) | j, run = vals[k] >> 4, size = vals[k] & 15;
                    t->look[index] = (uint16_t)((l << 8) | vals[k]);
                    if (size && l + size <= LOOK) {
                        int v = (index >> (LOOK - l - size)) & ((1 << size) - 1);
                        v = v < (1 << (size - 1)) ? v - (1 << size) + 1 : v; /* JPEG's EXTEND */
                        t->fast[index] = (int32_t)((uint32_t)v << 16) | (run << 8) | (l + size);
                    }
                }
        }
        t->maxcode[l] = counts[l - 1] ? code - 1 : -1;
        code <<= 1;
    }
    t->used = 1;
    return 0;
}

/* Bytes loaded one at a time: where one may be 0xFF (its zero skipped), or at the end (zeros then). */
static void refill_slowly(Bits *b)
{
    b->buf &= b->bits ? ~0ULL << (64 - b->bits) : 0; /* what the quick way loaded beyond the valid bits */
    while (b->bits <= 56) {
        uint64_t byte = 0;
        if (b->p < b->end) {
            byte = *b->p++;
            b->p += byte == 0xFF; /* within the data, every 0xFF is followed by a zero */
        }
        b->buf |= byte << (56 - b->bits);
        b->bits += 8;
        b->loaded++;
    }
}

/* At least 32 valid bits after it: a symbol and its extra bits take 31 at most (a code of up to 16 bits, then
 * up to 15 bits of an AC value in damaged data; 11 of a DC difference). Loads up to 56 when it loads, so that
 * most calls load nothing. */
static inline void refill(Bits *b)
{
    if (b->bits >= 32)
        return;
    if (b->end - b->p >= 8) {
        uint64_t v;
        memcpy(&v, b->p, 8);
#if defined(__GNUC__) || defined(__clang__)
        v = __builtin_bswap64(v);
#else
        v = ((v & 0xFFULL) << 56) | ((v & 0xFF00ULL) << 40) | ((v & 0xFF0000ULL) << 24) | ((v & 0xFF000000ULL) << 8)
            | ((v >> 8) & 0xFF000000ULL) | ((v >> 24) & 0xFF0000ULL) | ((v >> 40) & 0xFF00ULL) | (v >> 56);
#endif
        uint64_t t = ~v;
        if (!((t - 0x0101010101010101ULL) & ~t & 0x8080808080808080ULL)) { /* no byte 0xFF among the 8 */
            int k = (63 - b->bits) >> 3;
            b->buf |= v >> b->bits;
            b->p += k;
            b->loaded += (uint64_t)k;
            b->bits |= 56;
            return;
        }
    }
    refill_slowly(b);
}

static inline uint64_t position(const Bits *b)
{
    return (b->at + b->loaded) * 8 - (uint64_t)b->bits;
}

/* The bytes 0xFF in [from, to): within the data, as many zeros not data. */
static uint64_t stuffed(const uint8_t *from, const uint8_t *to)
{
    uint64_t count = 0;
    for (const uint8_t *ff; from < to && (ff = memchr(from, 0xFF, (size_t)(to - from))) != NULL; from = ff + 1)
        count++;
    return count;
}

/* A reader from byte `from` of the data as stored, `at` the data's bytes before it. */
static Bits reader(const Scan *s, const uint8_t *from, uint64_t at)
{
    Bits b = {from, s->end, 0, 0, at, 0};
    return b;
}

static inline int symbol(const Huff *t, Bits *b)
{
    unsigned e = t->look[b->buf >> (64 - LOOK)];
    if (e) {
        b->buf <<= e >> 8;
        b->bits -= (int)(e >> 8);
        return (int)(e & 255);
    }
    uint32_t top = (uint32_t)(b->buf >> 48);
    for (int l = LOOK + 1; l <= 16; l++) {
        int32_t c = (int32_t)(top >> (16 - l));
        if (c <= t->maxcode[l]) {
            b->buf <<= l;
            b->bits -= l;
            int at = t->first[l] + c;
            return at >= 0 && at < 256 ? t->vals[at] : -1;
        }
    }
    return -1;
}

/* The next s bits as a signed value (JPEG's EXTEND), without a branch the data would make unpredictable. */
static inline int32_t take(Bits *b, int s)
{
    uint32_t v = (uint32_t)(b->buf >> (64 - s));
    b->buf <<= s;
    b->bits -= s;
    int32_t negative = ((int32_t)v - (1 << (s - 1))) >> 31;
    return (int32_t)v + (negative & (1 - (1 << s)));
}

/* One block: its DC coefficient (its prediction updated) in *dc, its outputs' means but for the DC's share in
 * out (the DC is added when the halves are joined: the second half's is mended first). 0, or -1 for a bad
 * code. Inlined with `outs` a constant, the compiler adds a coefficient to all the outputs at once. */
static inline int block(const Comp *c, Bits *b, int32_t *pred, int32_t *dc, float *out, const int outs)
{
    refill(b);
    int s = symbol(c->dc, b);
    if (s < 0 || s > 11)
        return -1;
    if (s)
        *pred = (int32_t)((uint32_t)*pred + (uint32_t)take(b, s)); /* wraps, without undefined behaviour */
    *dc = *pred;
    float acc[16] = {0};
    for (int k = 1; k < 64;) {
        refill(b);
        int32_t fast = c->ac->fast[b->buf >> (64 - LOOK)];
        int32_t v;
        if (fast) { /* most coefficients: one lookup */
            b->buf <<= fast & 255;
            b->bits -= fast & 255;
            k += (fast >> 8) & 15;
            v = fast >> 16;
        }
        else {
            int rs = symbol(c->ac, b);
            if (rs < 0)
                return -1;
            int run = rs >> 4;
            s = rs & 15;
            if (!s) {
                if (run != 15)
                    break; /* end of block */
                k += 16;
                continue;
            }
            k += run;
            v = k > 63 ? 0 : take(b, s);
        }
        if (k > 63)
            return -1;
        const float *w = c->w[k];
        for (int o = 0; o < outs; o++)
            acc[o] += (float)v * w[o];
        k++;
    }
    memcpy(out, acc, sizeof(float) * (size_t)outs);
    return 0;
}

/* A block of component c: its outputs, the compiler's copy of the loop for each count. */
static inline int any_block(const Comp *c, Bits *b, int32_t *pred, int32_t *dc, float *out)
{
    switch (c->nx * c->ny) {
    case 1: return block(c, b, pred, dc, out, 1);
    case 2: return block(c, b, pred, dc, out, 2);
    case 4: return block(c, b, pred, dc, out, 4);
    case 8: return block(c, b, pred, dc, out, 8);
    default: return block(c, b, pred, dc, out, 16);
    }
}

static inline uint8_t clamp(float x)
{
    return x <= 0.0f ? 0 : x >= 255.0f ? 255 : (uint8_t)(x + 0.5f);
}

static inline uint8_t byte(int x)
{
    return (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
}

/* MCU m into the picture: each block's outputs plus its DC coefficient's share (libjpeg keeps 16 bits of it),
 * then JFIF's YCbCr to RGB in 16-bit fixed point. A subsampled chroma block has as many outputs as the MCU's
 * luma blocks together (see Comp). Both halves put their MCUs alike, so that where they meet does not change
 * a bit. */
static inline void put_mcu(const Scan *s, long m, const float *out, const int32_t *dcs)
{
    const int mw = s->hmax * s->comp[0].nx, mh = s->vmax * s->comp[0].ny; /* the MCU's size in pixels */
    const long x0 = m % s->mcux * mw, y0 = m / s->mcux * mh;
    const int w = (int)(s->width - x0 < mw ? s->width - x0 : mw);
    const int h = (int)(s->height - y0 < mh ? s->height - y0 : mh);
    uint8_t samples[3][4 * 4];
    for (int k = 0; k < s->nblocks; k++) {
        const int c = s->block_comp[k], b = s->block_index[k];
        const Comp *comp = &s->comp[c];
        const float *o = out + s->block_at[k];
        float shift = 128.0f + (float)(int16_t)(uint16_t)(uint32_t)dcs[k] * comp->dc_weight;
        int bx = b % comp->h * comp->nx, by = b / comp->h * comp->ny;
        for (int y = 0; y < comp->ny; y++)
            for (int x = 0; x < comp->nx; x++)
                samples[c][(by + y) * mw + bx + x] = clamp(o[y * comp->nx + x] + shift);
    }
    for (int y = 0; y < h; y++) {
        const uint8_t *l = samples[0] + y * mw, *u = samples[1] + y * mw, *v = samples[2] + y * mw;
        if (s->ncomp == 1) {
            memcpy(s->pixels + (size_t)(y0 + y) * (size_t)s->width + (size_t)x0, l, (size_t)w);
            continue;
        }
        uint8_t *p = s->pixels + ((size_t)(y0 + y) * (size_t)s->width + (size_t)x0) * 3;
        for (int x = 0; x < w; x++, p += 3) {
            int cb = u[x] - 128, cr = v[x] - 128;
            p[0] = byte(l[x] + ((91881 * cr + 32768) >> 16));
            p[1] = byte(l[x] + ((-22554 * cb - 46802 * cr + 32768) >> 16));
            p[2] = byte(l[x] + ((116130 * cb + 32768) >> 16));
        }
    }
}

/* One MCU, to the picture or kept (see Run); 0, or -1 for a bad code or for running past the data. */
static inline int mcu(const Scan *s, Run *r)
{
    const size_t first = (size_t)r->m * (size_t)s->nblocks;
    float here[6 * 16];
    int32_t dc[6];
    float *out = r->dc ? r->out + (size_t)r->m * (size_t)s->mcu_outputs : here;
    int32_t *dcs = r->dc ? r->dc + first : dc;
    for (int k = 0; k < s->nblocks; k++) {
        int c = s->block_comp[k];
        if (any_block(&s->comp[c], &r->b, &r->pred[c], dcs + k, out + s->block_at[k]))
            return -1;
    }
    if (position(&r->b) > s->nbits)
        return -1;
    if (!r->dc)
        put_mcu(s, r->m, out, dc);
    r->m++;
    return 0;
}

/* The second half: from byte `start`, MCUs counted from 0 there, the starts and predictions of the first
 * SYNC_RECORDS kept. A code error means it is not in step yet: it starts again at the next byte. */
typedef struct {
    const Scan *s;
    Run run;
    const uint8_t *start;   /* where it starts in the data as stored, */
    uint64_t origin;        /* and the data's bytes before */
    uint64_t at[SYNC_RECORDS];
    int32_t pred[SYNC_RECORDS][3];
    long recorded;
} Second;

#ifndef _WIN32 /* one thread there (see jpeg_scaled) */
static void second_half(Second *h)
{
    const Scan *s = h->s;
    for (int attempt = 0; attempt < RESTARTS && h->start < s->end; attempt++) {
        Run *r = &h->run;
        r->b = reader(s, h->start, h->origin);
        r->m = 0;
        r->pred[0] = r->pred[1] = r->pred[2] = 0;
        h->recorded = 0;
        for (;;) {
            if (r->m >= s->total)
                return;
            uint64_t before = position(&r->b);
            if (r->m < SYNC_RECORDS) {
                h->at[r->m] = before;
                memcpy(h->pred[r->m], r->pred, sizeof r->pred);
                h->recorded = r->m + 1;
            }
            const uint8_t *from = r->b.p;
            if (mcu(s, r)) {
                if (before + 8 >= s->nbits || r->m >= SETTLED)
                    return; /* the end of the data, or an error of the data's: what was decoded stands */
                /* Again from a byte after this MCU's first (near enough: the reader runs ahead by up to 8),
                 * not the zero after a 0xFF. */
                const uint8_t *next = from > h->start + 8 ? from - 8 : h->start + 1;
                next += next[-1] == 0xFF;
                h->origin += (uint64_t)(next - h->start) - stuffed(h->start, next);
                h->start = next;
                break;
            }
        }
    }
    h->run.m = 0;
    h->recorded = 0;
}

static void *second_thread(void *arg)
{
    second_half(arg);
    return NULL;
}
#endif

/* The first half to the end, meeting the second where it can. -> the MCU where it met (its index in the
 * second's count in *j), or the total when it decoded all itself; -1 on an error. */
static long first_half(const Scan *s, Run *r, const Second *h, long *j)
{
    long next = 0; /* the second's first recorded start not yet passed */
    while (r->m < s->total) {
        uint64_t at = position(&r->b);
        if (h && h->recorded && at >= h->at[0]) {
            while (next < h->recorded && h->at[next] < at)
                next++;
            if (next == h->recorded)
                h = NULL; /* past what it kept: no meeting */
            else if (h->at[next] == at && h->run.m - next >= s->total - r->m) {
                *j = next;
                return r->m;
            }
        }
        if (mcu(s, r))
            return -1;
    }
    return r->m;
}

/* The halves joined: the second half's MCUs to the picture, split between two threads. */
typedef struct {
    const Scan *s;
    long met, j;               /* the MCU where the halves met, and its index in the second's count */
    int32_t offset[3];         /* what the second half's DC coefficients lack */
    const float *out;          /* the second half's blocks */
    const int32_t *dc;
} Join;

/* MCUs met + from to met + to, decoded by the second half: to the picture, their DC mended. */
static void join_part(const Join *t, long from, long to)
{
    const Scan *s = t->s;
    for (long m = t->met + from; m < t->met + to; m++) {
        size_t local = (size_t)(m - t->met + t->j);
        int32_t dcs[6];
        for (int k = 0; k < s->nblocks; k++)
            dcs[k] = (int32_t)((uint32_t)t->dc[local * (size_t)s->nblocks + (size_t)k]
                               + (uint32_t)t->offset[s->block_comp[k]]);
        put_mcu(s, m, t->out + local * (size_t)s->mcu_outputs, dcs);
    }
}

#ifndef _WIN32
static void *join_thread(void *arg)
{
    const Join *t = arg;
    long rest = t->s->total - t->met;
    join_part(t, rest / 2, rest);
    return NULL;
}
#endif

/* The second half's MCUs to the picture, half of them on another thread when there are two. */
static void join(const Join *t, int threads)
{
    long rest = t->s->total - t->met;
#ifndef _WIN32
    pthread_t thread;
    if (threads > 1 && pthread_create(&thread, NULL, join_thread, (void *)t) == 0) {
        join_part(t, 0, rest / 2);
        pthread_join(thread, NULL);
        return;
    }
#endif
    (void)threads;
    join_part(t, 0, rest);
}

static void release(void **buffers, int count)
{
    for (int i = 0; i < count; i++)
        PyMem_Free(buffers[i]);
}

/* jpeg_scaled(data, start, tables, components, width, height, n, threads, split) -> (the image's pixels (RGB,
 * or L for one component) at n/8 of its size, rounded up, the MCU from which the second half's were taken: the
 * count of MCUs if the halves did not meet); None where the data does not decode or does not end the image.
 * data[start:] is the scan's data. tables: DC 0 and 1,
 * AC 0 and 1, each 16 counts then 256 symbols. components: each h, v, DC table, AC table, then 64 quantisers
 * as little-endian 16-bit, in zigzag order. split: the second half's first byte in it (0: the middle). The
 * tests choose split and read where the halves met; jpeg.py takes the middle and the pixels. */
PyObject *jpeg_scaled(PyObject *module, PyObject *args)
{
    const char *raw, *tables, *comps;
    Py_ssize_t raw_size, start, tables_size, comps_size, split;
    int width, height, n, threads;
    if (!PyArg_ParseTuple(args, "y#ny#y#iiiin:jpeg_scaled", &raw, &raw_size, &start, &tables, &tables_size, &comps,
                          &comps_size, &width, &height, &n, &threads, &split))
        return NULL;
    if (start < 0 || start > raw_size)
        return PyErr_Format(PyExc_ValueError, "jpeg_scaled: start %zd outside %zd bytes", start, raw_size);
    raw += start;
    raw_size -= start;
    const Py_ssize_t comp_bytes = 4 + 128;
    if (tables_size != 4 * 272 || (comps_size != comp_bytes && comps_size != 3 * comp_bytes) || (n != 1 && n != 2)
        || width < 1 || height < 1 || width > 65535 || height > 65535 || split < 0)
        return PyErr_Format(PyExc_ValueError, "jpeg_scaled: tables of %zd bytes, components of %zd, %dx%d, n=%d",
                            tables_size, comps_size, width, height, n);
    Scan s;
    memset(&s, 0, sizeof s);
    s.ncomp = (int)(comps_size / comp_bytes);
    Huff huff[4];
    for (int t = 0; t < 4; t++)
        if (huff_build(&huff[t], (const uint8_t *)tables + t * 272, (const uint8_t *)tables + t * 272 + 16))
            Py_RETURN_NONE;
    int hmax = 1, vmax = 1;
    for (int c = 0; c < s.ncomp; c++) {
        const uint8_t *d = (const uint8_t *)comps + c * comp_bytes;
        Comp *k = &s.comp[c];
        k->h = s.ncomp == 1 ? 1 : d[0];
        k->v = s.ncomp == 1 ? 1 : d[1];
        if (k->h < 1 || k->h > 2 || k->v < 1 || k->v > 2 || d[2] > 1 || d[3] > 1
            || (c > 0 && (k->h != 1 || k->v != 1)))
            Py_RETURN_NONE; /* sampling libjpeg allows and this does not: Pillow decodes it */
        k->dc = &huff[d[2]];
        k->ac = &huff[2 + d[3]];
        if (!k->dc->used || !k->ac->used)
            Py_RETURN_NONE;
        hmax = k->h > hmax ? k->h : hmax;
        vmax = k->v > vmax ? k->v : vmax;
    }
    static const uint8_t zigzag[64] = {0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40,
        48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58,
        59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};
    for (int c = 0; c < s.ncomp; c++) {
        const uint8_t *d = (const uint8_t *)comps + c * comp_bytes;
        Comp *k = &s.comp[c];
        k->nx = n * hmax / k->h;
        k->ny = n * vmax / k->v;
        /* An output's mean of the inverse DCT: each frequency's cosines averaged over the output's columns (or
         * rows), C(0) = 1/sqrt(2) folded in; the DCT's 1/4 is applied below. */
        double across[8][4], down[8][4];
        for (int u = 0; u < 8; u++)
            for (int i = 0; i < 4; i++) {
                double sum_x = 0, sum_y = 0;
                for (int x = i * 8 / k->nx; i < k->nx && x < (i + 1) * 8 / k->nx; x++)
                    sum_x += cos((2 * x + 1) * u * 3.14159265358979323846 / 16);
                for (int y = i * 8 / k->ny; i < k->ny && y < (i + 1) * 8 / k->ny; y++)
                    sum_y += cos((2 * y + 1) * u * 3.14159265358979323846 / 16);
                double scale = u == 0 ? 1 / sqrt(2.0) : 1.0;
                across[u][i] = scale * sum_x * k->nx / 8;
                down[u][i] = scale * sum_y * k->ny / 8;
            }
        for (int z = 1; z < 64; z++) { /* the DC's is dc_weight: added when the MCU goes to the picture */
            int u = zigzag[z] % 8, v = zigzag[z] / 8;
            double q = (double)(d[4 + 2 * z] | (d[5 + 2 * z] << 8));
            for (int i = 0; i < k->ny; i++)
                for (int j = 0; j < k->nx; j++)
                    k->w[z][i * k->nx + j] = (float)(q * across[u][j] * down[v][i] / 4);
        }
        k->dc_weight = (float)((d[4] | (d[5] << 8)) / 8.0);
    }
    for (int c = 0; c < s.ncomp; c++)
        for (int b = 0; b < s.comp[c].h * s.comp[c].v; b++) {
            s.block_index[s.nblocks] = b;
            s.block_at[s.nblocks] = s.mcu_outputs;
            s.mcu_outputs += s.comp[c].nx * s.comp[c].ny;
            s.block_comp[s.nblocks++] = c;
        }
    long mcux = (width + 8 * hmax - 1) / (8 * hmax), mcuy = (height + 8 * vmax - 1) / (8 * vmax);
    s.total = mcux * mcuy;
    s.mcux = mcux;
    s.hmax = hmax;
    s.vmax = vmax;
    s.width = (width * n + 7) / 8;
    s.height = (height * n + 7) / 8;

    /* Components sharing their Huffman tables give the second half no way to tell which block of an MCU it is
     * on: it may decode in step with the codes and never meet the first. No second thread on Windows either. */
    int shared = s.ncomp == 3 && s.comp[1].dc == s.comp[0].dc && s.comp[1].ac == s.comp[0].ac
                 && s.comp[2].dc == s.comp[0].dc && s.comp[2].ac == s.comp[0].ac;
    int halves = threads > 1 && !shared ? 2 : 1;
#ifdef _WIN32
    halves = 1;
#endif
    enum { OUT, DC, SECOND, BUFFERS };
    void *buffers[BUFFERS] = {
        halves > 1 ? PyMem_Malloc((size_t)s.total * (size_t)s.mcu_outputs * sizeof(float)) : NULL, /* the second */
        halves > 1 ? PyMem_Malloc((size_t)s.total * (size_t)s.nblocks * sizeof(int32_t)) : NULL,  /* half's blocks */
        halves > 1 ? PyMem_Malloc(sizeof(Second)) : NULL,
    };
    PyObject *pixels = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)s.width * s.height * (s.ncomp == 3 ? 3 : 1));
    for (int i = 0; i < BUFFERS; i++)
        if (buffers[i] == NULL && halves > 1) {
            release(buffers, BUFFERS);
            Py_XDECREF(pixels);
            return PyErr_NoMemory();
        }
    if (pixels == NULL) {
        release(buffers, BUFFERS);
        return NULL;
    }
    Second *second = buffers[SECOND];
    s.pixels = (uint8_t *)PyBytes_AsString(pixels);
    int ok = 0;
    long met = -1, j = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Where the data ends (the first 0xFF not followed by a zero: a marker), and whether it ends the image. */
    const uint8_t *at = (const uint8_t *)raw, *end = at + raw_size, *marker = end;
    uint64_t zeros = 0;
    for (;;) {
        const uint8_t *ff = at < end ? memchr(at, 0xFF, (size_t)(end - at)) : NULL;
        if (ff == NULL)
            break;
        if (ff + 1 < end && ff[1] == 0) {
            zeros++;
            at = ff + 2;
            continue;
        }
        marker = ff;
        break;
    }
    s.data = (const uint8_t *)raw;
    s.end = marker;
    s.nbits = ((uint64_t)(marker - s.data) - zeros) * 8;
    while (marker + 2 < end && marker[1] == 0xFF) /* fill bytes before the marker */
        marker++;
    int ended = marker + 1 < end && marker[1] == 0xD9; /* libjpeg refuses more scans or frames */
    Run first = {reader(&s, s.data, 0), 0, {0, 0, 0}, NULL, NULL};
    int failed = 0;
    if (second && ended) { /* one that does not end the image is Pillow's to repair: not decoded here at all */
        memset(second, 0, sizeof *second);
        second->s = &s;
        const uint8_t *middle = s.data + (split ? (size_t)split : (size_t)(s.end - s.data) / 2);
        middle = middle < s.end ? middle : s.end;
        middle += middle > s.data && middle[-1] == 0xFF; /* not the zero after a 0xFF */
        second->start = middle;
        second->origin = (uint64_t)(middle - s.data) - stuffed(s.data, middle);
        const uint64_t halfway = second->origin; /* the second thread moves its own start as it restarts */
        second->run.out = buffers[OUT];
        second->run.dc = buffers[DC];
        /* Where no second thread starts, nothing of the second half is recorded: the first decodes it all. */
#ifndef _WIN32
        pthread_t thread;
        int threaded = pthread_create(&thread, NULL, second_thread, second) == 0;
#endif
        /* The first half up to the second's start, at the same time as the second half. */
        while (first.m < s.total && position(&first.b) < halfway * 8 && !failed)
            failed = mcu(&s, &first) != 0;
#ifndef _WIN32
        if (threaded)
            pthread_join(thread, NULL);
#endif
    }
    if (!failed && ended)
        met = first_half(&s, &first, second, &j);
    if (met >= 0) {
        Join joined = {&s, met, j, {0, 0, 0}, buffers[OUT], buffers[DC]};
        if (met < s.total)
            for (int c = 0; c < s.ncomp; c++)
                joined.offset[c] = (int32_t)((uint32_t)first.pred[c] - (uint32_t)second->pred[j][c]);
        join(&joined, halves);
        ok = 1;
    }
    Py_END_ALLOW_THREADS
    release(buffers, BUFFERS);
    if (!ok) {
        Py_DECREF(pixels);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nl)", pixels, met);
}
