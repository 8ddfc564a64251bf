/* The engine's loops over every byte of a file, written in C: counting line ends through a text file and
 * numbering the lines of a window (text.py; lines end at LF, CRLF or a lone CR, as in the editor), finding where
 * a run of ASCII bytes ends (a find's decoding, text.py), and finding where a notebook's image payload stops
 * being plain JSON string bytes (notebook/model.py). None of them parses a file format: they compare bytes with
 * a few values and copy whole lines; images, PDFs and notebooks are decoded by libraries. */
#define PY_SSIZE_T_CLEAN /* setup.py defines Py_LIMITED_API: only stable-ABI calls below */
#include <Python.h>
#include <limits.h>
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

static PyMethodDef methods[] = {
    {"count_line_ends", count_line_ends, METH_VARARGS,
     "count_line_ends(bytearray, n) -> line ends (LF, CRLF, lone CR) in buffer[:n]; a final CR counts as lone."},
    {"number_window", number_window, METH_VARARGS,
     "number_window(block, eof, first, limit, budget, max_line) -> (numbered bytes, lines shown, stop) or None."},
    {"plain_end", plain_end, METH_VARARGS,
     "plain_end(data, start, end) -> the first byte in data[start:end] a JSON string cannot hold as it is, or end."},
    {"ascii_end", ascii_end, METH_VARARGS,
     "ascii_end(bytearray, start, end) -> the first byte in buffer[start:end] that is not ASCII, or end."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "agentread._scan", NULL, 0, methods};

PyMODINIT_FUNC PyInit__scan(void)
{
    return PyModuleDef_Init(&module);
}
