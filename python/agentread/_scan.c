/* The engine's loops written in C: counting line ends through a text file and numbering the lines of a window
 * (text.py; lines end at LF, CRLF or a lone CR, as in the editor), finding where a run of ASCII bytes ends (a find's
 * decoding, text.py), finding where a notebook's image payload stops being plain JSON string bytes
 * (notebook/model.py), and walking a PDF page's objects and its paths' segments through PDFium's own functions
 * (readers/pdf/pdfium.py).
 * None of them parses a file format: they compare bytes with a few values and copy whole lines, or call PDFium,
 * which has parsed the page; images, PDFs and notebooks are decoded by libraries. */
#define PY_SSIZE_T_CLEAN /* setup.py defines Py_LIMITED_API: only stable-ABI calls below */
#include <Python.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* Bytes counted into 8-bit sums before they are added up: at most 255 ends fit, and the compiler turns the loop
 * into byte-wide vector compares. A multiple of 16, so that every full block splits into 16-byte vectors. */
#define BLOCK 240

/* Line ends in p[0:n]; a CR in the last byte counts as a lone CR (the caller holds back a CR that may be half
 * of a CRLF split across two reads). */
static Py_ssize_t count(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t total = 0;
    if (n == 0)
        return 0;
    Py_ssize_t last = n - 1;
    for (Py_ssize_t i = 0; i < last; i += BLOCK) {
        Py_ssize_t end = i + BLOCK < last ? i + BLOCK : last;
        uint8_t sum = 0;
        for (Py_ssize_t j = i; j < end; j++)
            sum += (p[j] == '\n') + ((p[j] == '\r') & (p[j + 1] != '\n'));
        total += sum;
    }
    return total + (p[last] == '\n' || p[last] == '\r');
}

/* A bytearray, the scan's read buffer: the stable ABI of 3.10 has no buffer protocol. */
static PyObject *count_line_ends(PyObject *module, PyObject *args)
{
    PyObject *buffer;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Yn:count_line_ends", &buffer, &n))
        return NULL;
    Py_ssize_t size = PyByteArray_Size(buffer);
    if (n < 0 || n > size)
        return PyErr_Format(PyExc_ValueError, "count_line_ends: n=%zd is outside a buffer of %zd bytes", n, size);
    return PyLong_FromSsize_t(count((const unsigned char *)PyByteArray_AsString(buffer), n));
}

/* Decimal digits of n. */
static int digits(unsigned long long n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

static unsigned long long magnitude(long long n)
{
    return n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
}

/* The width of a line's number, its sign included (lines counted from the end are negative): at least six
 * columns, as cat -n. */
static int number_width(long long n)
{
    int width = digits(magnitude(n)) + (n < 0);
    return width < 6 ? 6 : width;
}

enum { STOP_NONE, STOP_OUTPUT, STOP_LIMIT };

/* The lines of block numbered from `first` as cat -n, within `limit` lines and `budget` bytes (each line's cost
 * is its number, tab, bytes and newline; the first is shown whatever it costs) -> (numbered bytes, lines shown,
 * why it stopped: 0 at the end of the file, 1 the budget, 2 the limit). Lines split as bytes.splitlines does;
 * when the block is not the end of the file its last line may go on past it and is not counted. None when the
 * caller's line loop must decide: no line, a line over `max_line` bytes (it is cut with a marker), a first line
 * over the budget (it is cut to fit), or the block ran out before the window did. */
static PyObject *number_window(PyObject *module, PyObject *args)
{
    const char *block;
    Py_ssize_t size, limit, budget, max_line;
    long long first;
    int eof;
    if (!PyArg_ParseTuple(args, "y#pLnnn:number_window", &block, &size, &eof, &first, &limit, &budget, &max_line))
        return NULL;
    if (limit < 1 || first > LLONG_MAX - limit - 1 || first < -(LLONG_MAX - limit - 1))
        return PyErr_Format(PyExc_ValueError, "number_window: first=%lld, limit=%zd", first, limit);
    /* Line starts and lengths, one past the limit to tell whether more follow, and one more: the block's last
     * line, which may not be whole. */
    Py_ssize_t room = (limit < size ? limit : size) + 2, found = 0; /* a line takes a byte at least */
    Py_ssize_t *starts = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)room);
    if (starts == NULL)
        return PyErr_NoMemory();
    Py_ssize_t *lengths = starts + room;
    const unsigned char *p = (const unsigned char *)block;
    Py_ssize_t next_lf = -1; /* the first LF at or after i, or size: searched again only once i passes it */
    for (Py_ssize_t i = 0; i < size && found < room; found++) {
        /* memchr runs a vector at a time: two searches per line beat one compare per byte for every line over
         * a few bytes. The LF found is kept (a file of lone CRs would otherwise search to its end each line),
         * and the search for a CR ends at it. */
        if (next_lf < i) {
            const unsigned char *lf = memchr(p + i, '\n', (size_t)(size - i));
            next_lf = lf ? lf - p : size;
        }
        Py_ssize_t j = next_lf;
        const unsigned char *cr = memchr(p + i, '\r', (size_t)(j - i));
        if (cr)
            j = cr - p;
        starts[found] = i;
        lengths[found] = j - i;
        i = j + (j < size) + (j + 1 < size && p[j] == '\r' && p[j + 1] == '\n');
    }
    Py_ssize_t kept = found == room ? limit + 1 : found - !eof;
    PyObject *answer = Py_None;
    Py_ssize_t shown = 0, used = 0;
    int stop = STOP_NONE;
    for (Py_ssize_t k = 0; k < kept; k++)
        if (lengths[k] > max_line)
            goto decided;
    if (kept <= 0 || number_width(first) + 1 + lengths[0] + 1 > budget)
        goto decided;
    while (shown < kept) {
        Py_ssize_t cost = number_width(first + shown) + 1 + lengths[shown] + 1;
        if (shown > 0 && used + cost > budget)
            break;
        used += cost;
        shown++;
    }
    stop = shown < kept ? STOP_OUTPUT : STOP_NONE;
    if (stop == STOP_NONE || shown >= limit) {
        if (kept > limit) {
            stop = STOP_LIMIT;
            for (; shown > limit; shown--)
                used -= number_width(first + shown - 1) + 1 + lengths[shown - 1] + 1;
        }
        else if (!eof)
            goto decided;
    }
    answer = PyBytes_FromStringAndSize(NULL, used - 1);
    if (answer == NULL)
        goto decided;
    char *out = PyBytes_AsString(answer);
    for (Py_ssize_t k = 0; k < shown; k++) {
        long long number = first + k;
        unsigned long long rest = magnitude(number);
        char *q = out + number_width(number);
        do {
            *--q = (char)('0' + rest % 10);
            rest /= 10;
        } while (rest);
        if (number < 0)
            *--q = '-';
        memset(out, ' ', (size_t)(q - out));
        out += number_width(number);
        *out++ = '\t';
        memcpy(out, block + starts[k], (size_t)lengths[k]);
        out += lengths[k];
        if (k + 1 < shown)
            *out++ = '\n';
    }
    answer = Py_BuildValue("Nni", answer, shown, stop);
decided:
    PyMem_Free(starts);
    if (answer == Py_None)
        Py_INCREF(Py_None);
    return answer;
}

/* Whether c stands for itself in a JSON string: printable ASCII but the quote and the backslash. */
#define PLAIN(c) ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')

/* The first byte of data[start:end] that is not PLAIN, or end: where a JSON string's plain stretch ends. */
static PyObject *plain_end(PyObject *module, PyObject *args)
{
    const char *data;
    Py_ssize_t size, start, end;
    if (!PyArg_ParseTuple(args, "y#nn:plain_end", &data, &size, &start, &end))
        return NULL;
    if (start < 0 || start > end || end > size)
        return PyErr_Format(PyExc_ValueError, "plain_end: [%zd:%zd] is outside %zd bytes", start, end, size);
    const unsigned char *p = (const unsigned char *)data;
    Py_ssize_t i = start;
    /* A block at a time, every byte tested without a branch: the compiler tests a vector of them at once. */
    for (; end - i >= 64; i += 64) {
        unsigned char other = 0;
        for (int j = 0; j < 64; j++)
            other |= !PLAIN(p[i + j]);
        if (other)
            break;
    }
    while (i < end && PLAIN(p[i]))
        i++;
    return PyLong_FromSsize_t(i);
}

/* The first byte of buffer[start:end] that is not ASCII (0x80 or more), or end: where a find's run of lines it
 * can decode as Latin-1 stops (text.py). A bytearray, the find's read buffer. */
static PyObject *ascii_end(PyObject *module, PyObject *args)
{
    PyObject *buffer;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "Ynn:ascii_end", &buffer, &start, &end))
        return NULL;
    Py_ssize_t size = PyByteArray_Size(buffer);
    if (start < 0 || start > end || end > size)
        return PyErr_Format(PyExc_ValueError, "ascii_end: [%zd:%zd] is outside a buffer of %zd bytes", start, end, size);
    const unsigned char *p = (const unsigned char *)PyByteArray_AsString(buffer);
    Py_ssize_t i = start;
    /* As plain_end: a block of bytes OR-ed without a branch, which the compiler does a vector at a time. */
    for (; end - i >= 64; i += 64) {
        unsigned char high = 0;
        for (int j = 0; j < 64; j++)
            high |= p[i + j];
        if (high & 0x80)
            break;
    }
    while (i < end && p[i] < 0x80)
        i++;
    return PyLong_FromSsize_t(i);
}


/* --- A PDF page's objects and its paths' segments, through PDFium's public functions (fpdf_edit.h), given as
 * addresses by pypdfium2's bindings: this file includes no PDFium header and links no PDFium library. */

#if defined(_WIN32) && !defined(_WIN64)
#define PDFIUM_CALL __stdcall /* FPDF_CALLCONV on 32-bit Windows */
#else
#define PDFIUM_CALL
#endif

typedef int (PDFIUM_CALL *count_fn)(void *);
typedef void *(PDFIUM_CALL *page_object_fn)(void *, int);
typedef void *(PDFIUM_CALL *form_object_fn)(void *, unsigned long);
/* An FS_MATRIX is six floats. */
typedef int (PDFIUM_CALL *matrix_fn)(void *, float *);
typedef void (PDFIUM_CALL *transform_fn)(void *, double, double, double, double, double, double);
typedef int (PDFIUM_CALL *colour_fn)(void *, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
typedef int (PDFIUM_CALL *size_fn)(void *, float *);
typedef int (PDFIUM_CALL *bounds_fn)(void *, float *, float *, float *, float *);
typedef int (PDFIUM_CALL *draw_mode_fn)(void *, int *, int *);
typedef void *(PDFIUM_CALL *segment_fn)(void *, int);
typedef int (PDFIUM_CALL *point_fn)(void *, float *, float *);

/* In the order pdfium.py's PAGE_OBJECT_FUNCTIONS names them. */
enum {
    PAGE_COUNT, PAGE_OBJECT, FORM_COUNT, FORM_OBJECT, TYPE, MATRIX, TRANSFORM, RENDER_MODE, FILL_COLOUR,
    STROKE_COLOUR, FONT_SIZE, BOUNDS, DRAW_MODE, SEGMENT_COUNT, SEGMENT, SEGMENT_TYPE, SEGMENT_POINT, SEGMENT_CLOSE,
    FUNCTIONS
};

/* The addresses of the functions in f, from the tuple pdfium.py's _functions gives; 0 with an exception set when
 * one is missing. */
static int addresses(PyObject *functions, void **f, const char *caller)
{
    if (PyTuple_Size(functions) != FUNCTIONS) {
        PyErr_Format(PyExc_ValueError, "%s: %d functions expected", caller, FUNCTIONS);
        return 0;
    }
    for (int i = 0; i < FUNCTIONS; i++) {
        f[i] = PyLong_AsVoidPtr(PyTuple_GetItem(functions, i));
        if (!f[i]) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%s: function %d is NULL", caller, i);
            return 0;
        }
    }
    return 1;
}

/* The columns pdfium.py's PageObjects reads, one entry an object: its kind, address, box on the page (left,
 * bottom, right, top), and for a text its render mode, the colour it is drawn in (fill, or stroke when the mode
 * fills no glyph), its font size as drawn and where it starts on the page; for a path whether it is filled, and
 * its fill colour. */
enum { KINDS, HANDLES, BOXES, MODES, COLOURS, COLOURED, POINTS, STARTS, FILLED, COLUMNS };
static const size_t WIDTH[COLUMNS] = {1, 8, 32, 1, 4, 1, 8, 16, 1};

typedef struct {
    unsigned char *data;
    size_t used, size;
} column;

static unsigned char *room(column *c, size_t n)
{
    if (c->used + n > c->size) {
        size_t size = c->size ? c->size * 2 : 4096;
        while (size < c->used + n)
            size *= 2;
        unsigned char *data = realloc(c->data, size);
        if (!data)
            return NULL;
        c->data = data;
        c->size = size;
    }
    unsigned char *at = c->data + c->used;
    c->used += n;
    return at;
}

/* The n columns as a tuple of bytes, each column freed; NULL with an exception set when out of memory (the columns
 * freed all the same). */
static PyObject *as_bytes(column *cols, int n, int failed)
{
    PyObject *columns = failed ? PyErr_NoMemory() : PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *bytes = columns ? PyBytes_FromStringAndSize((const char *)cols[i].data, (Py_ssize_t)cols[i].used)
                                  : NULL;
        if (columns && (!bytes || PyTuple_SetItem(columns, i, bytes) < 0))
            Py_CLEAR(columns);
        free(cols[i].data);
    }
    return columns;
}

/* The page, or a form object, whose objects are walked; m places them on the page. */
typedef struct {
    void *holder;
    int form, count, next;
    double m[6];
} frame;

/* outer after inner, [a b c d e f] as PDF writes them: x' = ax + cy + e. */
static void compose(const double *outer, const float *inner, double *out)
{
    out[0] = outer[0] * inner[0] + outer[2] * inner[1];
    out[1] = outer[1] * inner[0] + outer[3] * inner[1];
    out[2] = outer[0] * inner[2] + outer[2] * inner[3];
    out[3] = outer[1] * inner[2] + outer[3] * inner[3];
    out[4] = outer[0] * inner[4] + outer[2] * inner[5] + outer[4];
    out[5] = outer[1] * inner[4] + outer[3] * inner[5] + outer[5];
}

static unsigned char channel(unsigned int value)
{
    return value > 255 ? 255 : (unsigned char)value;
}

/* Describes the object into the columns; 0 when out of memory. */
static int describe(void **f, column *cols, void *thing, int kind, const double *m, const int *kinds)
{
    unsigned char *at[COLUMNS];
    for (int i = 0; i < COLUMNS; i++) {
        if (!(at[i] = room(&cols[i], WIDTH[i])))
            return 0;
        memset(at[i], 0, WIDTH[i]);
    }
    *(signed char *)at[MODES] = -1; /* not a text */
    double nan = NAN, box[4] = {nan, nan, nan, nan}, points = nan, start[2] = {nan, nan};
    uint64_t handle = (uint64_t)(uintptr_t)thing;
    float l, b, r, t;
    if (kind != kinds[3] && ((bounds_fn)f[BOUNDS])(thing, &l, &b, &r, &t)) {
        double xs[4] = {m[0] * l + m[2] * b + m[4], m[0] * l + m[2] * t + m[4], m[0] * r + m[2] * b + m[4],
                        m[0] * r + m[2] * t + m[4]};
        double ys[4] = {m[1] * l + m[3] * b + m[5], m[1] * l + m[3] * t + m[5], m[1] * r + m[3] * b + m[5],
                        m[1] * r + m[3] * t + m[5]};
        box[0] = box[2] = xs[0];
        box[1] = box[3] = ys[0];
        for (int i = 1; i < 4; i++) {
            box[0] = fmin(box[0], xs[i]), box[2] = fmax(box[2], xs[i]);
            box[1] = fmin(box[1], ys[i]), box[3] = fmax(box[3], ys[i]);
        }
    }
    unsigned int rgba[4];
    int ok = 0;
    if (kind == kinds[0]) { /* a text */
        int mode = ((count_fn)f[RENDER_MODE])(thing);
        mode = mode < -1 || mode > 7 ? -1 : mode;
        *(signed char *)at[MODES] = (signed char)mode;
        /* Modes 0, 2, 4 and 6 fill the glyphs; the others stroke them, or draw nothing. */
        ok = ((colour_fn)f[mode >= 0 && mode % 2 == 0 ? FILL_COLOUR : STROKE_COLOUR])(thing, &rgba[0], &rgba[1],
                                                                                       &rgba[2], &rgba[3]);
        float size, placed[6];
        if (((size_fn)f[FONT_SIZE])(thing, &size) && ((matrix_fn)f[MATRIX])(thing, placed)) {
            double det = ((double)placed[0] * placed[3] - (double)placed[1] * placed[2]) * (m[0] * m[3] - m[1] * m[2]);
            points = size * sqrt(fabs(det));
            start[0] = m[0] * placed[4] + m[2] * placed[5] + m[4];
            start[1] = m[1] * placed[4] + m[3] * placed[5] + m[5];
        }
    } else if (kind == kinds[2]) { /* a path */
        int fill, stroke;
        if (((draw_mode_fn)f[DRAW_MODE])(thing, &fill, &stroke))
            *at[FILLED] = fill != kinds[4];
        ok = ((colour_fn)f[FILL_COLOUR])(thing, &rgba[0], &rgba[1], &rgba[2], &rgba[3]);
    }
    if (ok) {
        for (int i = 0; i < 4; i++)
            at[COLOURS][i] = channel(rgba[i]);
        *at[COLOURED] = 1;
    }
    *(signed char *)at[KINDS] = (signed char)kind;
    memcpy(at[HANDLES], &handle, 8);
    memcpy(at[BOXES], box, 32);
    memcpy(at[POINTS], &points, 8);
    memcpy(at[STARTS], start, 16);
    return 1;
}

/* page_objects(functions, page, keep, kinds) -> (cut, columns): the page's objects in the file's order, those in
 * forms right after their form, each described in the columns; past the first `keep`, each is shrunk to nothing
 * (the file is not touched) and a form is not entered. pdfium.py's Page.objects_table says why, and does the
 * same in Python. */
static PyObject *page_objects(PyObject *module, PyObject *args)
{
    PyObject *functions, *page_address;
    Py_ssize_t keep;
    int kinds[5]; /* text, image, path, form; and FPDF_FILLMODE_NONE */
    if (!PyArg_ParseTuple(args, "O!On(iiiii):page_objects", &PyTuple_Type, &functions, &page_address, &keep,
                          &kinds[0], &kinds[1], &kinds[2], &kinds[3], &kinds[4]))
        return NULL;
    void *f[FUNCTIONS];
    if (!addresses(functions, f, "page_objects"))
        return NULL;
    void *page = PyLong_AsVoidPtr(page_address);
    if (!page)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "page_objects: no page");
    column cols[COLUMNS] = {{0}};
    frame *stack = NULL;
    size_t depth = 0, room_for = 0;
    int failed = 0, cut = 0;
    Py_ssize_t seen = 0;
    Py_BEGIN_ALLOW_THREADS
    stack = malloc(sizeof(frame) * (room_for = 16));
    if (!stack)
        failed = 1;
    else {
        frame top = {page, 0, ((count_fn)f[PAGE_COUNT])(page), 0, {1, 0, 0, 1, 0, 0}};
        stack[depth++] = top;
    }
    void *shrunk = NULL;
    while (!failed && depth) {
        frame *at = &stack[depth - 1];
        if (at->next >= at->count) {
            depth--;
            continue;
        }
        int index = at->next++;
        void *thing = at->form ? ((form_object_fn)f[FORM_OBJECT])(at->holder, (unsigned long)index)
                               : ((page_object_fn)f[PAGE_OBJECT])(at->holder, index);
        if (!thing)
            continue;
        int kind = ((count_fn)f[TYPE])(thing);
        if (seen < keep) {
            seen++;
            if (!describe(f, cols, thing, kind, at->m, kinds)) {
                failed = 1;
                break;
            }
        } else {
            ((transform_fn)f[TRANSFORM])(thing, 0, 0, 0, 0, 0, 0);
            shrunk = thing;
            cut = 1;
        }
        if (kind == kinds[3] && thing != shrunk) { /* a form kept: its objects next */
            if (depth == room_for) {
                frame *grown = realloc(stack, sizeof(frame) * (room_for *= 2));
                if (!grown) {
                    failed = 1;
                    break;
                }
                stack = grown;
                at = &stack[depth - 1];
            }
            float own[6];
            frame inner = {thing, 1, ((count_fn)f[FORM_COUNT])(thing), 0, {1, 0, 0, 1, 0, 0}};
            if (((matrix_fn)f[MATRIX])(thing, own))
                compose(at->m, own, inner.m);
            else
                memcpy(inner.m, at->m, sizeof inner.m);
            stack[depth++] = inner;
        }
    }
    free(stack);
    Py_END_ALLOW_THREADS
    PyObject *columns = as_bytes(cols, COLUMNS, failed);
    return columns ? Py_BuildValue("(NN)", PyBool_FromLong(cut), columns) : NULL;
}

/* The columns pdfium.py's PathSegments reads: one entry a path, the segments PDFium says it has (-1 where it
 * cannot say) and where its segments end in the others, of one entry a segment: its kind (FPDF_SEGMENT_*), the
 * point it goes to (NaN where PDFium gives none), and whether it closes its figure. */
enum { PATH_COUNTS, PATH_ENDS, SEGMENT_KINDS, SEGMENT_XS, SEGMENT_YS, SEGMENT_CLOSES, SEGMENT_COLUMNS };

/* path_segments(functions, paths, most) -> columns: the first `most` segments of each path, `paths` their
 * FPDF_PAGEOBJECTs' addresses (8 bytes each, from page_objects' handles) on a page still open. pdfium.py's
 * PageObjects.segments does the same in Python. */
static PyObject *path_segments(PyObject *module, PyObject *args)
{
    PyObject *functions;
    const char *paths;
    Py_ssize_t size, most;
    if (!PyArg_ParseTuple(args, "O!y#n:path_segments", &PyTuple_Type, &functions, &paths, &size, &most))
        return NULL;
    if (size % 8 || most < 0 || most > INT_MAX)
        return PyErr_Format(PyExc_ValueError, "path_segments: %zd bytes of addresses, most=%zd", size, most);
    void *f[FUNCTIONS];
    if (!addresses(functions, f, "path_segments"))
        return NULL;
    column cols[SEGMENT_COLUMNS] = {{0}};
    int failed = 0;
    int64_t end = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t at = 0; at < size / 8 && !failed; at++) {
        uint64_t address;
        memcpy(&address, paths + 8 * at, 8);
        void *path = (void *)(uintptr_t)address;
        int count = ((count_fn)f[SEGMENT_COUNT])(path);
        for (int i = 0; i < count && i < most; i++, end++) {
            void *segment = ((segment_fn)f[SEGMENT])(path, i);
            int kind = ((count_fn)f[SEGMENT_TYPE])(segment);
            float x, y;
            if (!((point_fn)f[SEGMENT_POINT])(segment, &x, &y))
                x = y = NAN;
            unsigned char *to[SEGMENT_COLUMNS];
            for (int c = SEGMENT_KINDS; c < SEGMENT_COLUMNS; c++)
                failed |= !(to[c] = room(&cols[c], c == SEGMENT_CLOSES ? 1 : 4));
            if (failed)
                break;
            memcpy(to[SEGMENT_KINDS], &kind, 4);
            memcpy(to[SEGMENT_XS], &x, 4);
            memcpy(to[SEGMENT_YS], &y, 4);
            *to[SEGMENT_CLOSES] = ((count_fn)f[SEGMENT_CLOSE])(segment) != 0;
        }
        unsigned char *counted = room(&cols[PATH_COUNTS], 4), *ended = room(&cols[PATH_ENDS], 8);
        failed |= !counted || !ended;
        if (!failed) {
            memcpy(counted, &count, 4);
            memcpy(ended, &end, 8);
        }
    }
    Py_END_ALLOW_THREADS
    return as_bytes(cols, SEGMENT_COLUMNS, failed);
}

static PyMethodDef methods[] = {
    {"count_line_ends", count_line_ends, METH_VARARGS,
     "count_line_ends(bytearray, n) -> line ends (LF, CRLF, lone CR) in buffer[:n]; a final CR counts as lone."},
    {"number_window", number_window, METH_VARARGS,
     "number_window(block, eof, first, limit, budget, max_line) -> (numbered bytes, lines shown, stop) or None."},
    {"plain_end", plain_end, METH_VARARGS,
     "plain_end(data, start, end) -> the first byte in data[start:end] a JSON string cannot hold as it is, or end."},
    {"ascii_end", ascii_end, METH_VARARGS,
     "ascii_end(bytearray, start, end) -> the first byte in buffer[start:end] that is not ASCII, or end."},
    {"page_objects", page_objects, METH_VARARGS,
     "page_objects(functions, page, keep, (text, image, path, form, no fill)) -> (cut, columns) of a PDF page's "
     "objects."},
    {"path_segments", path_segments, METH_VARARGS,
     "path_segments(functions, paths, most) -> columns of the first `most` segments of each of a PDF page's paths."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "agentread._scan", NULL, 0, methods};

PyMODINIT_FUNC PyInit__scan(void)
{
    return PyModuleDef_Init(&module);
}
