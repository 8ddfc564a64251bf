/* Line-end counting for text scans (text.py): the one loop in the engine that runs over every byte of a file,
 * so the one written in C. Lines end at LF, CRLF or a lone CR, as in the editor. */
#define PY_SSIZE_T_CLEAN /* setup.py defines Py_LIMITED_API: only stable-ABI calls below */
#include <Python.h>
#include <stdint.h>

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

static PyMethodDef methods[] = {
    {"count_line_ends", count_line_ends, METH_VARARGS,
     "count_line_ends(bytearray, n) -> line ends (LF, CRLF, lone CR) in buffer[:n]; a final CR counts as lone."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "agentread._lineends", NULL, 0, methods};

PyMODINIT_FUNC PyInit__lineends(void)
{
    return PyModuleDef_Init(&module);
}
