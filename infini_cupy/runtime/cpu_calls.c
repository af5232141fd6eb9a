/* The cpu device's repeated elementwise calls, compiled: hot_calls.c's unary, binary and into
 * hand over Arrays of the `numpy` backend here.
 *
 * elementwise/numpy_backend.py's `call` learns, per name and operand types (each array's
 * dtype, each Python scalar's type; out's dtype last for out=), what answers as `call` does
 * without resolving again: NumPy's bare ufunc, or `call`'s computation of that loop
 * (numpy_backend._computed: a special case of the standard, the result's dtype fixed). These
 * are plain_calls and plain_calls_into. A repeat of learnt types calls that answer under
 * np.errstate(all="ignore") (NumPy 2's error-state context variable, set and reset as
 * numpy_backend.silence does) and makes a new Array over its result: the steps of
 * numpy_backend.repeat and repeat_into. A miss, a read-only out= or an error (NumPy's, such
 * as an out-of-range Python int) returns None, nothing written, and the caller takes the
 * Python path, which raises what the first call raised.
 */
#include "cpu_calls.h"

/* What configure_cpu() was given (references held for the life of the process); NULL until
 * then, or where the check of NumPy's fields failed: every call goes the Python way. */
static PyObject *plain_calls, *plain_calls_into, *errstate_var, *ignore_all, *as_array,
    *out_kwnames;

/* configure_cpu(plain_calls, plain_calls_into, errstate_var, ignore_all, asarray, sample):
 * `sample` is a NumPy array whose numpy_fields.descr must be its dtype. */
PyObject *configure_cpu(PyObject *self, PyObject *args) {
    PyObject *values[6];
    if (!PyArg_UnpackTuple(args, "configure_cpu", 6, 6, &values[0], &values[1], &values[2],
                           &values[3], &values[4], &values[5]))
        return NULL;
    if (!PyDict_Check(values[0]) || !PyDict_Check(values[1]) ||
        !PyContextVar_CheckExact(values[2])) {
        PyErr_SetString(PyExc_TypeError, "configure_cpu: two dicts, a ContextVar, ...");
        return NULL;
    }
    PyObject *dtype = PyObject_GetAttrString(values[5], "dtype");
    if (dtype == NULL)
        return NULL;
    int readable = ((numpy_fields *)values[5])->descr == dtype;
    Py_DECREF(dtype);
    if (!readable)  /* another layout of NumPy's fields: the Python way alone */
        Py_RETURN_NONE;
    if (out_kwnames == NULL && (out_kwnames = Py_BuildValue("(s)", "out")) == NULL)
        return NULL;
    PyObject **targets[5] = {&plain_calls, &plain_calls_into, &errstate_var, &ignore_all,
                             &as_array};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*targets[i], values[i]);
    }
    Py_RETURN_NONE;
}

/* An operand's part of the key: a NumPy array's dtype, a Python scalar's type (borrowed);
 * NULL for anything else (no key, the Python way). */
static PyObject *type_of(PyObject *operand, PyObject *ndarray_type) {
    PyTypeObject *kind = Py_TYPE(operand);
    if (kind == (PyTypeObject *)ndarray_type)
        return ((numpy_fields *)operand)->descr;
    if (kind == &PyFloat_Type || kind == &PyLong_Type || kind == &PyBool_Type ||
        kind == &PyComplex_Type)
        return (PyObject *)kind;
    return NULL;
}

/* Whether the array operands broadcast to exactly out's shape (`operands` hold NumPy arrays
 * and Python scalars): NumPy would broadcast them up to a bigger out=, which every device
 * refuses, so anything else takes the Python way (numpy_backend.check_out_shape raises). */
static int out_shape_fits(PyObject *const *operands, Py_ssize_t n, PyObject *out,
                          PyObject *ndarray_type) {
    numpy_fields *o = (numpy_fields *)out;
    int widest = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (Py_TYPE(operands[i]) == (PyTypeObject *)ndarray_type &&
            ((numpy_fields *)operands[i])->nd > widest)
            widest = ((numpy_fields *)operands[i])->nd;
    if (widest != o->nd)
        return 0;
    for (int d = 0; d < o->nd; d++) {
        Py_ssize_t got = 1;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (Py_TYPE(operands[i]) != (PyTypeObject *)ndarray_type)
                continue;
            numpy_fields *a = (numpy_fields *)operands[i];
            int k = d - (o->nd - a->nd);
            if (k >= 0 && a->dimensions[k] != 1)
                got = a->dimensions[k];
        }
        if (got != o->dimensions[d])
            return 0;
    }
    return 1;
}

/* Whether out's elements are plainly distinct: contiguous, or each dim's |stride| (sorted,
 * length-1 dims left out) at least the extent of the dims inside it, the first test of
 * strided/layout.check_dst_not_self_overlapping. Anything else (an interleaved as_strided
 * view, a stride 0) takes the Python way, whose exact check decides and raises. */
static int plainly_distinct(numpy_fields *o) {
    if (o->flags & (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS))
        return 1;
    Py_ssize_t stride[64], length[64];
    int dims = 0;
    if (o->nd > 64)
        return 0;
    for (int d = 0; d < o->nd; d++) {
        if (o->dimensions[d] == 0)
            return 1;  /* nothing is written */
        if (o->dimensions[d] == 1)
            continue;
        Py_ssize_t s = o->strides[d] < 0 ? -o->strides[d] : o->strides[d];
        int k = dims++;
        for (; k > 0 && stride[k - 1] > s; k--) {  /* insertion sort by |stride| */
            stride[k] = stride[k - 1];
            length[k] = length[k - 1];
        }
        stride[k] = s;
        length[k] = o->dimensions[d];
    }
    PyObject *itemsize = PyObject_GetAttrString((PyObject *)o, "itemsize");
    Py_ssize_t extent = itemsize == NULL ? -1 : PyLong_AsSsize_t(itemsize);
    Py_XDECREF(itemsize);
    if (extent < 1) {
        PyErr_Clear();
        return 0;
    }
    for (int k = 0; k < dims; k++) {
        if (stride[k] < extent)
            return 0;
        extent += stride[k] * (length[k] - 1);
    }
    return 1;
}

PyObject *cpu_call(PyObject *name, PyObject *const *operands, Py_ssize_t n, PyObject *out,
                   PyObject *b, PyObject *ndarray_type) {
    if (plain_calls == NULL || n < 1 || n > 2)
        Py_RETURN_NONE;
    PyObject *key = PyTuple_New(n + 1 + (out != NULL));
    if (key == NULL)
        return NULL;
    Py_INCREF(name);
    PyTuple_SET_ITEM(key, 0, name);
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i == n && out == NULL)
            break;
        PyObject *t = type_of(i < n ? operands[i] : out, ndarray_type);
        if (t == NULL || (i == n && Py_TYPE(out) != (PyTypeObject *)ndarray_type)) {
            Py_DECREF(key);
            Py_RETURN_NONE;
        }
        Py_INCREF(t);
        PyTuple_SET_ITEM(key, i + 1, t);
    }
    PyObject *answer = PyDict_GetItemWithError(out == NULL ? plain_calls : plain_calls_into,
                                               key);  /* borrowed */
    Py_DECREF(key);
    if (answer == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    if (out != NULL && !(flags_readable && (((numpy_fields *)out)->flags & NPY_ARRAY_WRITEABLE)))
        Py_RETURN_NONE;  /* read-only (or flags unread): the Python way raises, naming it */
    if (out != NULL && !out_shape_fits(operands, n, out, ndarray_type))
        Py_RETURN_NONE;  /* not the result's shape: the Python way raises, naming it */
    if (out != NULL && !plainly_distinct((numpy_fields *)out))
        Py_RETURN_NONE;  /* elements may share memory: the Python way decides, names it */
    Py_INCREF(answer);
    PyObject *token = PyContextVar_Set(errstate_var, ignore_all);
    if (token == NULL) {
        Py_DECREF(answer);
        return NULL;
    }
    PyObject *stack[3] = {operands[0], n > 1 ? operands[1] : out, out};
    PyObject *result = PyObject_Vectorcall(answer, stack, n, out == NULL ? NULL : out_kwnames);
    Py_DECREF(answer);
    if (PyContextVar_Reset(errstate_var, token) < 0) {
        Py_DECREF(token);
        Py_XDECREF(result);
        return NULL;
    }
    Py_DECREF(token);
    if (result == NULL) {  /* an error (an out-of-range Python int, a shape): the Python
                              way raises it as the first call did */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (out != NULL) {  /* written into out */
        Py_DECREF(result);
        Py_INCREF(out);
        return out;
    }
    if (Py_TYPE(result) != (PyTypeObject *)ndarray_type) {  /* a NumPy scalar (0-d inputs) */
        Py_SETREF(result, PyObject_CallOneArg(as_array, result));
        if (result == NULL)
            return NULL;
    }
    PyObject *r = new_array(result, b, NULL, Py_None);
    Py_DECREF(result);
    return r;
}
