/* Whether every value of a float32 or float64 array lies strictly between two bounds: the
 * check elementwise/numpy_casts.py's float_to_int makes before it leaves a float -> integer
 * cast to NumPy (in range, NumPy's truncation is the GPU's answer; NaN, infinities and values
 * out of range take the GPU's rule instead).
 *
 * NumPy answers it with a min and a max reduction, each about 1.4 us of call overhead on a
 * small array; this is one pass over the buffer. The bounds are Python floats, as float_to_int
 * compares min() and max() with them; float64 values are compared with them as they are,
 * float32 values with float bounds that give the same answers. NaN compares false, so it is
 * never within.
 */
#include "float_range.h"

#include <math.h>
#include <string.h>

/* 16 bytes of values and the masks their comparisons give (GCC's and clang's vector
 * extensions: SSE2 or NEON, whichever the target has; -O2 vectorises no loop by itself) */
typedef float float4 __attribute__((vector_size(16)));
typedef int mask4 __attribute__((vector_size(16)));
typedef double double2 __attribute__((vector_size(16)));

#define BLOCK 1024 /* values per pass, then an early exit */

/* float32 values against float bounds: low rounded down and high up to floats, so that
 * v > low and v < high hold for a float v exactly where they hold in double. */
static int floats_in(const float *v, Py_ssize_t count, double low, double high) {
    float low_f = (float)low, high_f = (float)high;
    if ((double)low_f > low)
        low_f = nextafterf(low_f, -INFINITY);
    if ((double)high_f < high)
        high_f = nextafterf(high_f, INFINITY);
    const float4 lows = {low_f, low_f, low_f, low_f}, highs = {high_f, high_f, high_f, high_f};
    Py_ssize_t i = 0;
    while (i + 4 <= count) {
        mask4 within = {-1, -1, -1, -1};
        Py_ssize_t end = i + BLOCK < count ? i + BLOCK : count;
        for (; i + 4 <= end; i += 4) {
            float4 x;
            memcpy(&x, v + i, sizeof x); /* no alignment assumed */
            within &= (x > lows); /* one mask at a time: g++ keeps a plain and */
            within &= (x < highs);
        }
        if (!(within[0] & within[1] & within[2] & within[3]))
            return 0;
    }
    for (; i < count; i++)
        if (!(v[i] > low_f && v[i] < high_f))
            return 0;
    return 1;
}

static int doubles_in(const double *v, Py_ssize_t count, double low, double high) {
    const double2 lows = {low, low}, highs = {high, high};
    Py_ssize_t i = 0;
    while (i + 2 <= count) {
        mask4 within = {-1, -1, -1, -1};
        Py_ssize_t end = i + BLOCK < count ? i + BLOCK : count;
        for (; i + 2 <= end; i += 2) {
            double2 x;
            memcpy(&x, v + i, sizeof x);
            within &= (mask4)(x > lows); /* 64-bit masks as int lanes, one at a time: */
            within &= (mask4)(x < highs); /* g++ ands them with no per-lane fixing */
        }
        if (!(within[0] & within[1] & within[2] & within[3]))
            return 0;
    }
    for (; i < count; i++)
        if (!(v[i] > low && v[i] < high))
            return 0;
    return 1;
}

/* floats_within(x, low, high): whether low < v < high for every value v of x, a contiguous
 * array of native float32 or float64 (read through the buffer protocol, its format "f" or
 * "d"); None for any other array or object: the caller asks NumPy. */
PyObject *floats_within(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 3 || !PyFloat_CheckExact(args[1]) || !PyFloat_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "floats_within(x, low, high): low and high floats");
        return NULL;
    }
    double low = PyFloat_AS_DOUBLE(args[1]), high = PyFloat_AS_DOUBLE(args[2]);
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_ANY_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear(); /* not contiguous, or no buffer: NumPy's reductions answer */
        Py_RETURN_NONE;
    }
    int answer = -1;
    const char *format = view.format;
    if (format != NULL && format[0] != '\0' && format[1] == '\0') {
        if (format[0] == 'f' && view.itemsize == 4)
            answer = floats_in((const float *)view.buf, view.len / 4, low, high);
        else if (format[0] == 'd' && view.itemsize == 8)
            answer = doubles_in((const double *)view.buf, view.len / 8, low, high);
    }
    PyBuffer_Release(&view);
    if (answer < 0)
        Py_RETURN_NONE;
    return PyBool_FromLong(answer);
}
