/* Bicubic downscaling of a large PNG's rows (image.py), with the arithmetic of Pillow's
 * Image.resize(size, BICUBIC): the same filter, fixed point and rounding, so the picture is the one Pillow
 * makes. Pillow would first copy the whole image three times (unpacked to 4 bytes a pixel, premultiplied by
 * its alpha, resized across), and memory new to a process costs about 0.65 ms a MB to map on the machines
 * measured: more than the resampling itself in a server's first read of a 3,000 px screenshot. Here only the
 * rows a band needs are resized across, and each output row goes straight to the PNG's rows. */
#define PY_SSIZE_T_CLEAN /* setup.py defines Py_LIMITED_API: only stable-ABI calls below */
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Fixed-point bits of a coefficient, as Pillow's for 8-bit samples: of 32 bits, 8 for the sample and 2 of
 * headroom for a sum whose negative lobes let it run past the sample's range. */
#define PRECISION_BITS 22
#define HALF (1 << (PRECISION_BITS - 1))
/* Source samples either side of an output sample that the cubic reads, before it is widened to reduce. */
#define SUPPORT 2.0
/* The most an image is reduced here, across or down: the cubic then reads 257 samples. Its weights take memory
 * in proportion (a row of 100 million pixels to 2,000 would take 1.6 GB); image.py leaves an image reduced
 * more (a thin strip, reduced far more along its length) to Pillow. */
#define MAX_REDUCTION 64

/* The cubic convolution kernel with a = -0.5 (Keys), evaluated in Pillow's order of operations. */
static double cubic(double x)
{
    if (x < 0.0)
        x = -x;
    if (x < 1.0)
        return (1.5 * x - 2.5) * x * x + 1;
    if (x < 2.0)
        return (((x - 5) * x + 8) * x - 4) * -0.5;
    return 0.0;
}

/* Which source samples each output sample reads, and with what weights. */
typedef struct {
    int size;      /* most samples read by one output sample */
    int *first;    /* per output sample, its first source sample */
    int *count;    /* and how many it reads */
    int32_t *k;    /* `size` weights per output sample, in fixed point */
} Taps;

static void taps_free(Taps *t)
{
    free(t->first);
    free(t->count);
    free(t->k);
}

/* The taps of output samples [from, to) of `out` made from `in` source samples: the cubic is widened by the
 * reduction and centred on the output sample's centre in the source, its weights are made to sum to one,
 * then fixed point rounded away from zero. 0, or -1 without memory. */
static int taps_make(Taps *t, int in, int out, int from, int to)
{
    double scale = (double)in / out, widen = scale < 1.0 ? 1.0 : scale, narrow = 1.0 / widen;
    double support = SUPPORT * widen;
    int size = (int)ceil(support) * 2 + 1, n = to - from;
    double *w = malloc(sizeof(double) * (size_t)size);
    t->size = size;
    t->first = malloc(sizeof(int) * (size_t)n);
    t->count = malloc(sizeof(int) * (size_t)n);
    t->k = calloc((size_t)n * (size_t)size, sizeof(int32_t));
    if (!w || !t->first || !t->count || !t->k) {
        free(w);
        return -1;
    }
    for (int o = from; o < to; o++) {
        double center = (o + 0.5) * scale, sum = 0.0;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > in ? in : hi;
        hi = hi - lo > size ? lo + size : hi;
        for (int i = 0; i < hi - lo; i++) {
            w[i] = cubic((i + lo - center + 0.5) * narrow);
            sum += w[i];
        }
        int32_t *k = t->k + (size_t)(o - from) * size;
        for (int i = 0; i < hi - lo; i++) {
            double v = (sum != 0.0 ? w[i] / sum : w[i]) * (1 << PRECISION_BITS);
            k[i] = (int32_t)(v < 0 ? v - 0.5 : v + 0.5);
        }
        t->first[o - from] = lo;
        t->count[o - from] = hi - lo;
    }
    free(w);
    return 0;
}

static inline uint8_t clip(int32_t sum)
{
    sum >>= PRECISION_BITS;
    return (uint8_t)(sum < 0 ? 0 : sum > 255 ? 255 : sum);
}

/* One row resized across: n output pixels of `ch` channels from the first `ch` channels of pixels `step`
 * bytes apart in `in`. Inlined with ch and step constants, a pixel's channels are summed side by side. */
static inline void across(uint8_t *out, const uint8_t *in, const Taps *t, int n, const int ch, const int step)
{
    for (int o = 0; o < n; o++) {
        const uint8_t *p = in + (size_t)t->first[o] * step;
        const int32_t *k = t->k + (size_t)o * t->size;
        int32_t sum[4] = {HALF, HALF, HALF, HALF};
        for (int i = 0; i < t->count[o]; i++, p += step)
            for (int c = 0; c < ch; c++)
                sum[c] += p[c] * k[i];
        for (int c = 0; c < ch; c++)
            out[(size_t)o * ch + c] = clip(sum[c]);
    }
}

/* The pixels of every mode (step = ch), and the colour of opaque grey+alpha and RGBA (ch = step - 1). */
static void across_any(uint8_t *out, const uint8_t *in, const Taps *t, int n, int ch, int step)
{
    switch (ch * 8 + step) {
    case 1 * 8 + 1: across(out, in, t, n, 1, 1); break;
    case 2 * 8 + 2: across(out, in, t, n, 2, 2); break;
    case 3 * 8 + 3: across(out, in, t, n, 3, 3); break;
    case 4 * 8 + 4: across(out, in, t, n, 4, 4); break;
    case 1 * 8 + 2: across(out, in, t, n, 1, 2); break;
    default: across(out, in, t, n, 3, 4);
    }
}

/* One output row down from `count` source rows: n samples, summed a source row at a time so the compiler
 * works on many samples at once. */
static void down(uint8_t *out, const uint8_t *const *rows, int count, const int32_t *k, int32_t *sum, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sum[i] = HALF;
    for (int y = 0; y < count; y++) {
        const uint8_t *row = rows[y];
        int32_t w = k[y];
        for (size_t i = 0; i < n; i++)
            sum[i] += row[i] * w;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = clip(sum[i]);
}

/* Colour times alpha (the last channel), rounded as Pillow's RGBA to RGBa: resampling colour apart from
 * its alpha would bleed the colour of transparent pixels into their neighbours. */
static void premultiply(uint8_t *out, const uint8_t *in, size_t pixels, int ch)
{
    for (size_t p = 0; p < pixels; p++, in += ch, out += ch) {
        unsigned alpha = in[ch - 1];
        for (int c = 0; c < ch - 1; c++) {
            unsigned v = in[c] * alpha + 128;
            out[c] = (uint8_t)(((v >> 8) + v) >> 8);
        }
        out[ch - 1] = (uint8_t)alpha;
    }
}

/* Whether every pixel of `count` rows is opaque: its colour times its alpha is its colour then, and Pillow's
 * sums of the alpha come to 255 again (the weights sum to one within their rounding, which is far under half
 * a level), so the colour alone is resampled. Most screenshots with an alpha channel are so. */
static int opaque(const uint8_t *const *rows, int count, size_t pixels, int ch)
{
    for (int r = 0; r < count; r++)
        for (size_t p = 0; p < pixels; p++)
            if (rows[r][p * ch + ch - 1] != 255)
                return 0;
    return 1;
}

/* Opaque pixels of `ch` channels from their colour. */
static void with_alpha(uint8_t *out, const uint8_t *colour, size_t pixels, int ch)
{
    for (size_t p = 0; p < pixels; p++, out += ch, colour += ch - 1) {
        memcpy(out, colour, (size_t)ch - 1);
        out[ch - 1] = 255;
    }
}

/* And back, as Pillow's RGBa to RGBA. */
static void unpremultiply(uint8_t *row, size_t pixels, int ch)
{
    for (size_t p = 0; p < pixels; p++, row += ch) {
        unsigned alpha = row[ch - 1];
        if (alpha != 0 && alpha != 255)
            for (int c = 0; c < ch - 1; c++) {
                unsigned v = 255 * row[c] / alpha;
                row[c] = (uint8_t)(v > 255 ? 255 : v);
            }
    }
}

/* resize_rows(pieces, top, width, height, channels, alpha, out_width, out_height, from, to) -> bytes.
 * Output rows [from, to) of an image of width x height pixels of `channels` bytes (the last one alpha when
 * `alpha`) resized to out_width x out_height, each row preceded by a 0, PNG's filter type "none". `pieces`
 * are bytes of whole rows in order from row `top`, and must hold every row those output rows read. */
PyObject *resize_rows(PyObject *module, PyObject *args)
{
    PyObject *list;
    int top, width, height, ch, alpha, out_width, out_height, from, to;
    if (!PyArg_ParseTuple(args, "Oiiiipiiii:resize_rows", &list, &top, &width, &height, &ch, &alpha,
                          &out_width, &out_height, &from, &to))
        return NULL;
    if (width < 1 || height < 1 || out_width < 1 || out_height < 1 || ch < 1 || ch > 4
        || (alpha && ch != 2 && ch != 4) /* grey+alpha or RGBA */
        || from < 0 || to > out_height || from >= to || top < 0 || (size_t)width * ch > INT32_MAX
        || width / out_width >= MAX_REDUCTION || height / out_height >= MAX_REDUCTION)
        return PyErr_Format(PyExc_ValueError, "resize_rows: no rows %d to %d of %dx%d from %dx%d of %d channels",
                            from, to, out_width, out_height, width, height, ch);
    /* A tuple of the pieces is held while the GIL is let go: bytes never change, and none is freed. */
    PyObject *pieces = PySequence_Tuple(list);
    if (pieces == NULL)
        return NULL;
    size_t row_bytes = (size_t)width * ch, out_bytes = (size_t)out_width * ch;
    Py_ssize_t held = 0, count = PyTuple_Size(pieces);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *piece = PyTuple_GetItem(pieces, i);
        if (!PyBytes_Check(piece) || PyBytes_Size(piece) % row_bytes) {
            Py_DECREF(pieces);
            return PyErr_Format(PyExc_ValueError, "resize_rows: piece %zd is not bytes of rows", i);
        }
        held += PyBytes_Size(piece) / row_bytes;
    }
    Taps across_taps = {0}, down_taps = {0};
    const uint8_t **rows = NULL;
    uint8_t *work = NULL, *scratch = NULL;
    int32_t *sum = NULL;
    PyObject *result = NULL;
    if (taps_make(&across_taps, width, out_width, 0, out_width) < 0
        || taps_make(&down_taps, height, out_height, from, to) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    /* The source rows read: from the first output row's first to the last one's end. */
    int first = down_taps.first[0], last = down_taps.first[to - from - 1] + down_taps.count[to - from - 1];
    if (first < top || last > top + held || last > height) {
        PyErr_Format(PyExc_ValueError, "resize_rows: rows %d to %d are not all in the pieces", first, last);
        goto done;
    }
    rows = malloc(sizeof(uint8_t *) * (size_t)(last - first));
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((1 + out_bytes) * (size_t)(to - from)));
    if (rows == NULL || result == NULL)
        goto no_memory;
    for (Py_ssize_t i = 0, row = top; i < count && row < last; i++) {
        PyObject *piece = PyTuple_GetItem(pieces, i);
        const uint8_t *at = (const uint8_t *)PyBytes_AsString(piece);
        for (Py_ssize_t r = 0; r < PyBytes_Size(piece) / (Py_ssize_t)row_bytes; r++, row++, at += row_bytes)
            if (row >= first && row < last)
                rows[row - first] = at;
    }
    /* Across then down, unless the image loses over twice as many rows as columns: then down first, where
     * there are fewer rows to resize across. Pillow chooses so, and the order changes the rounding. */
    int across_first = !(height - out_height > 0 && height - out_height > 2 * (width - out_width));
    int span = last - first;
    size_t widest = row_bytes > out_bytes ? row_bytes : out_bytes;
    /* Across first: every source row read, resized across (premultiplied first, in `scratch`); for solid rows,
     * each output row's colour is made in `scratch`. Down first: the source rows premultiplied when there is
     * alpha, then one output row at a time down into `scratch`. */
    work = malloc(across_first ? (size_t)span * out_bytes : alpha ? (size_t)span * row_bytes : 1);
    scratch = malloc(widest);
    sum = malloc(sizeof(int32_t) * widest);
    if (work == NULL || scratch == NULL || sum == NULL)
        goto no_memory;
    uint8_t *out = (uint8_t *)PyBytes_AsString(result);
    Py_BEGIN_ALLOW_THREADS
    /* Colour alone, for rows all opaque (resized across first: down first is for rare shapes). */
    int solid = alpha && across_first && opaque(rows, span, (size_t)width, ch);
    int kept_ch = solid ? ch - 1 : ch;
    size_t kept_bytes = (size_t)out_width * kept_ch;
    if (across_first || alpha) {
        for (int r = 0; r < span; r++) {
            const uint8_t *row = rows[r];
            uint8_t *kept = work + (size_t)r * (across_first ? kept_bytes : row_bytes);
            if (alpha && !solid) {
                premultiply(across_first ? scratch : kept, row, (size_t)width, ch);
                row = across_first ? scratch : kept;
            }
            if (across_first)
                across_any(kept, row, &across_taps, out_width, kept_ch, ch);
            rows[r] = kept;
        }
    }
    for (int o = 0; o < to - from; o++, out += 1 + out_bytes) {
        const uint8_t *const *read = rows + (down_taps.first[o] - first);
        const int32_t *k = down_taps.k + (size_t)o * down_taps.size;
        out[0] = 0;
        if (solid) {
            down(scratch, read, down_taps.count[o], k, sum, kept_bytes);
            with_alpha(out + 1, scratch, (size_t)out_width, ch);
        } else if (across_first) {
            down(out + 1, read, down_taps.count[o], k, sum, out_bytes);
        } else {
            down(scratch, read, down_taps.count[o], k, sum, row_bytes);
            across_any(out + 1, scratch, &across_taps, out_width, ch, ch);
        }
        if (alpha && !solid)
            unpremultiply(out + 1, (size_t)out_width, ch);
    }
    Py_END_ALLOW_THREADS
    goto done;
no_memory:
    Py_CLEAR(result);
    PyErr_NoMemory();
done:
    taps_free(&across_taps);
    taps_free(&down_taps);
    free(rows);
    free(work);
    free(scratch);
    free(sum);
    Py_DECREF(pieces);
    return result;
}
