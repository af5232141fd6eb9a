/* The hot path of an elementwise call on Arrays, compiled (docs/dev/hot_path.md).
 *
 * The same steps as namespace/boundary.py's _unary/_binary and elementwise/short_path.py's
 * known.fast, in C: key the call by its name and each operand's layout id (an Array's) or
 * type (a scalar's), find the remembered plan, and for a one-launch call on the emulator
 * check the inputs' alignment, allocate the output with numpy.empty, pick the packed tail by
 * the 16-byte bits, launch and return the output as a settled Array. Any other plan goes
 * to `finish` (Python: short_path.run, or the general filling); a miss, a check that fails
 * or anything unusual returns None, nothing written, and the caller takes the Python path,
 * which decides as before (and raises what the first call raised).
 *
 * Arrays of the cpu device (the numpy backend) go to cpu_calls.c: NumPy's ufunc, or the
 * computation numpy_backend learnt, for types seen before.
 *
 * On the cuda backend with the compiled launch (INFINI_CUPY_LAUNCH=compiled) a plan's launch
 * record (known.compiled_launch, prepared.compiled_launch) goes to compiled_launch.c, which
 * launches it through the driver; this file finds the plan and hands over the operands.
 * What both read and make of Arrays (slots, layout ids, outputs) is hot_arrays.c's.
 *
 * Everything this reads is prepared in Python (short_path._fast_function, kept as
 * known.native), so the rules live in one place; this file only reads them.
 */
#include "compiled_launch.h"
#include "cpu_calls.h"
#include "float_range.h"
#include "hot_arrays.h"
#include "lazy_calls.h"

/* What configure() was given (references held for the life of the process; those both C
 * files read are hot_arrays.c's). */
static PyObject *by_ids, *into_by_ids, *ndarray_type, *run_function, *scalar_types, *lazy_var,
    *launch_function, *new_empty, *finish, *source, *native_name, *template_name, *shape_name,
    *launch_kwnames, *emulate, *compiled_launch_name;

static unsigned long long data_pointer(PyObject *array) {
    return (unsigned long long)(uintptr_t)((numpy_fields *)array)->data;
}

/* The names the hot path reads, made once (configure). */
static int intern_names(void) {
    if (intern_array_names() < 0)
        return -1;
    if (native_name != NULL)
        return 0;
    native_name = PyUnicode_InternFromString("native");
    template_name = PyUnicode_InternFromString("template");
    shape_name = PyUnicode_InternFromString("shape");
    emulate = PyUnicode_InternFromString("emulate");
    launch_kwnames = Py_BuildValue("(s)", "backend");
    compiled_launch_name = PyUnicode_InternFromString("compiled_launch");
    if (!native_name || !template_name || !shape_name || !emulate || !launch_kwnames ||
        !compiled_launch_name) {
        Py_CLEAR(native_name);  /* tried again at the next call */
        return -1;
    }
    return 0;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *values[17];
    if (!PyArg_UnpackTuple(args, "configure", 17, 17, &values[0], &values[1], &values[2],
                           &values[3], &values[4], &values[5], &values[6], &values[7],
                           &values[8], &values[9], &values[10], &values[11], &values[12],
                           &values[13], &values[14], &values[15], &values[16]))
        return NULL;
    if (!PyType_Check(values[0]) || !PyDict_Check(values[1]) ||
        !PyContextVar_CheckExact(values[3]) || !PyContextVar_CheckExact(values[4])) {
        PyErr_SetString(PyExc_TypeError, "configure: Array type, dict, ..., two ContextVars");
        return NULL;
    }
    if (slot_offset(values[0], "_a", &off_a) || slot_offset(values[0], "_b", &off_b) ||
        slot_offset(values[0], "_p", &off_p) || slot_offset(values[0], "_k", &off_k) ||
        slot_offset(values[0], "_d", &off_d))
        return NULL;
    PyObject **targets[15] = {&Array_type, &by_ids, &scalar_types, &lazy_var, &allocator_var,
                              &hooks, &launch_function, &new_empty, &settle, &learn_out_id,
                              &finish, &source, &numpy_backend, &into_by_ids, &ndarray_type};
    /* values[14], values[15]: a writeable and a read-only numpy.ndarray; values[16]:
       short_path.run (boundary._run_into: and a GPU's launch record), for calls into an
       Array whose plan has no native form or whose record declines */
    Py_INCREF(values[16]);
    Py_XSETREF(run_function, values[16]);
    flags_readable = Py_TYPE(values[14]) == Py_TYPE(values[15]) &&
                     (((numpy_fields *)values[14])->flags & NPY_ARRAY_WRITEABLE) &&
                     !(((numpy_fields *)values[15])->flags & NPY_ARRAY_WRITEABLE);
    values[14] = (PyObject *)Py_TYPE(values[14]);  /* kept: numpy.ndarray */
    for (int i = 0; i < 15; i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*targets[i], values[i]);
    }
    if (intern_names() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* 1 when elementwise calls are deferred here (xp.lazy()), 0 when not, -1 on error. */
static int lazy_now(void) {
    PyObject *value;
    if (PyContextVar_Get(lazy_var, NULL, &value) < 0)
        return -1;
    if (value == NULL)
        return 0;
    int on = PyObject_IsTrue(value);
    Py_DECREF(value);
    return on;
}

/* Launch as runtime/launch.py's launch() does, its hooks read here: a thread that skips
 * launches and records none launches nothing; any other calls launch() itself. */
static int launch_packed(PyObject *kernel, PyObject *grid, PyObject *block, PyObject *packed) {
    int state = hooks_state();
    if (state < 0 || state == 1)
        return state < 0 ? -1 : 0;  /* the error; skipped */
    PyObject *stack[6] = {source, kernel, grid, block, packed, emulate};  /* backend= */
    PyObject *r = PyObject_Vectorcall(launch_function, stack, 5, launch_kwnames);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The output: numpy.empty(shape, dtype), or, inside arrays.outputs_from, its allocator's
 * (shape as a tuple, dtype), as arrays.empty makes it; *settled says which (an allocator's
 * layout is its own: the Array is settled when it is next read). NULL with no error set
 * when the allocator's output is no NumPy array (the Python path decides). */
static PyObject *allocate(PyObject *shape, PyObject *dtype, int *settled) {
    PyObject *allocator;
    if (PyContextVar_Get(allocator_var, NULL, &allocator) < 0)
        return NULL;
    if (allocator == NULL || allocator == Py_None) {
        Py_XDECREF(allocator);
        *settled = 1;
        PyObject *empty_args[2] = {shape, dtype};
        return PyObject_Vectorcall(new_empty, empty_args, 2, NULL);
    }
    *settled = 0;
    PyObject *dims = PySequence_Tuple(shape), *out = NULL;
    if (dims != NULL) {
        PyObject *alloc_args[2] = {dims, dtype};
        out = PyObject_Vectorcall(allocator, alloc_args, 2, NULL);
        Py_DECREF(dims);
    }
    Py_DECREF(allocator);
    if (out != NULL && !PyObject_TypeCheck(out, (PyTypeObject *)ndarray_type))
        Py_CLEAR(out);
    return out;
}

/* Pack (out, x1, x2, out) + tail, a missing operand's pointer slot out again (the scalar
 * first: (out, out, the array, out)), and launch the plan's kernel (native's t[4:7]). */
static int pack_and_launch(PyObject **t, PyObject *out, PyObject *n1, PyObject *n2,
                           long arrays, long scalar_at, PyObject *tail) {
    Py_ssize_t n_tail = PyTuple_GET_SIZE(tail);
    PyObject *packed = PyTuple_New(4 + n_tail);
    if (packed == NULL)
        return -1;
    PyObject *slots[4] = {out, n1, out, out};
    if (arrays == 2)
        slots[2] = n2;
    else if (scalar_at == 0) {
        slots[1] = out;
        slots[2] = n1;
    }
    for (int i = 0; i < 4; i++) {
        Py_INCREF(slots[i]);
        PyTuple_SET_ITEM(packed, i, slots[i]);
    }
    for (Py_ssize_t i = 0; i < n_tail; i++) {
        PyObject *item = PyTuple_GET_ITEM(tail, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(packed, 4 + i, item);
    }
    int failed = launch_packed(t[4], t[5], t[6], packed);
    Py_DECREF(packed);
    return failed;
}

/* The one-launch call on the emulator (known.native, see short_path._fast_function):
 * arrays n1 (and n2, or the scalar v at operand s) at addresses a1, a2. Returns the settled
 * output Array, Py_None (new reference) when a check sends the call the Python way, or
 * NULL on an error of numpy.empty or of the launch. */
static PyObject *run_native(PyObject *known, PyObject *native, PyObject *b, PyObject *n1,
                            PyObject *n2, unsigned long long a1, unsigned long long a2) {
    /* (arrays, shape, dtype_out, out_mask, kernel, grid, block, off, on,
        align1, vector1, align2, vector2, scalar_at, last, seen) */
    if (!PyTuple_CheckExact(native) || PyTuple_GET_SIZE(native) != 16)
        Py_RETURN_NONE;
    PyObject **t = &PyTuple_GET_ITEM(native, 0);
    long arrays = PyLong_AsLong(t[0]);
    unsigned long long out_mask = as_bits(t[3]);
    unsigned long long align1 = as_bits(t[9]), vector1 = as_bits(t[10]);
    unsigned long long align2 = arrays == 2 ? as_bits(t[11]) : 0;
    unsigned long long vector2 = arrays == 2 ? as_bits(t[12]) : 0;
    if (a1 & align1 || a2 & align2)
        Py_RETURN_NONE;
    PyObject *scalar_off = NULL, *scalar_on = NULL;  /* borrowed from the seen tuple */
    PyObject *seen = NULL;
    long scalar_at = PyLong_AsLong(t[13]);
    if (scalar_at >= 0) {  /* an array and a Python scalar, n2 the scalar */
        seen = scalar_seen(t[14], t[15], n2);
        if (seen == NULL || seen == Py_None)
            return seen;
        scalar_off = PyTuple_GET_ITEM(seen, 1);
        scalar_on = PyTuple_GET_ITEM(seen, 2);
    }
    int settled;
    PyObject *out = allocate(t[1], t[2], &settled);
    if (out == NULL) {
        Py_XDECREF(seen);
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    }
    unsigned long long address = data_pointer(out);
    int misaligned = (a1 & vector1) || (a2 & vector2) || (address & out_mask);
    PyObject *tail = scalar_at >= 0 ? (misaligned ? scalar_off : scalar_on)
                                    : (misaligned ? t[7] : t[8]);
    if (!PyTuple_CheckExact(tail)) {
        Py_DECREF(out);
        Py_XDECREF(seen);
        Py_RETURN_NONE;
    }
    int failed = pack_and_launch(t, out, n1, n2, arrays, scalar_at, tail);
    Py_XDECREF(seen);
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    PyObject *r = output_array(known, out, b, address, settled);
    Py_DECREF(out);
    return r;
}

/* finish(known, natives, addresses, b): the Python way of a plan found by its key, the
 * operands in the call's order ((x,), (x1, x2), or an array n1 and a scalar n2, the scalar
 * first when `scalar_first`; a scalar's address is 0). */
static PyObject *call_finish(PyObject *known, PyObject *b, PyObject *n1, PyObject *n2,
                             PyObject *d1, PyObject *d2, int arrays, int scalar_first) {
    PyObject *zero = PyLong_FromLong(0), *natives = NULL, *addresses = NULL, *r = NULL;
    PyObject *a1 = d1 ? d1 : Py_None, *a2 = arrays == 2 && d2 ? d2 : zero;
    if (zero == NULL)
        return NULL;
    if (n2 == NULL) {
        natives = PyTuple_Pack(1, n1);
        addresses = PyTuple_Pack(1, a1);
    } else if (scalar_first) {
        natives = PyTuple_Pack(2, n2, n1);
        addresses = PyTuple_Pack(2, zero, a1);
    } else {
        natives = PyTuple_Pack(2, n1, n2);
        addresses = PyTuple_Pack(2, a1, a2);
    }
    if (natives != NULL && addresses != NULL)
        r = PyObject_CallFunctionObjArgs(finish, known, natives, addresses, b, NULL);
    Py_DECREF(zero);
    Py_XDECREF(natives);
    Py_XDECREF(addresses);
    return r;
}

/* After the key's lookup: the native call (the emulator's known.native, a GPU's
 * known.compiled_launch), else finish. */
static PyObject *serve(PyObject *known, PyObject *b, PyObject *n1, PyObject *n2,
                       PyObject *d1, PyObject *d2, int arrays, int scalar_first) {
    PyObject *native = PyObject_GetAttr(known, native_name);
    if (native == NULL)
        return NULL;
    Py_INCREF(b);  /* the Arrays may be released by what runs below */
    PyObject *r = NULL;
    unsigned long long a1 = as_bits(d1), a2 = arrays == 2 ? as_bits(d2) : 0;
    if (native != Py_None) {
        r = run_native(known, native, b, n1, n2, a1, a2);  /* an Array, None, or NULL */
    } else {
        PyObject *record = PyObject_GetAttr(known, compiled_launch_name);
        if (record != NULL && record != Py_None) {
            PyObject *natives[2] = {n1, arrays == 2 ? n2 : NULL};
            unsigned long long address[2] = {a1, a2};
            PyObject *scalar = arrays == 1 ? n2 : NULL;  /* unary: none */
            r = run_compiled(known, record, b, natives, address, scalar,
                             scalar == NULL ? -1 : scalar_first ? 0 : 1, NULL);
        }
        Py_XDECREF(record);
        if (r == NULL && !PyErr_Occurred())
            r = call_finish(known, b, n1, n2, d1, d2, arrays, scalar_first);
    }
    Py_DECREF(native);
    Py_DECREF(b);
    return r;
}

/* The plan under `key` in by_ids (the reference to `key` taken), served; None on a miss. */
static PyObject *serve_key(PyObject *key, PyObject *b, PyObject *n1, PyObject *n2,
                           PyObject *d1, PyObject *d2, int arrays, int scalar_first) {
    if (key == NULL)
        return NULL;
    PyObject *known = PyDict_GetItemWithError(by_ids, key);  /* borrowed */
    Py_DECREF(key);
    if (known == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    Py_INCREF(known);
    PyObject *r = serve(known, b, n1, n2, d1, d2, arrays, scalar_first);
    Py_DECREF(known);
    return r;
}

/* 0 when the hot path may run: configured, `nargs` arguments, outside xp.lazy(); else 1
 * (decline), 2 (inside xp.lazy(): lazy_calls.c's) or -1 (an error set). */
static int not_now(Py_ssize_t nargs, Py_ssize_t expected, const char *usage) {
    if (nargs != expected) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (Array_type == NULL)
        return 1;
    int lazy = lazy_now();
    return lazy > 0 ? 2 : lazy;
}

/* What a declined call returns: NULL on an error, the deferred Array or None inside
 * xp.lazy() (defer_seen: args[0] is the name), else None. */
static PyObject *declined_call(int declined, PyObject *const *args, Py_ssize_t nargs) {
    if (declined < 0)
        return NULL;
    if (declined == 2)
        return defer_seen(args[0], args + 1, nargs - 1);
    Py_RETURN_NONE;
}

/* binary(name, x1, x2): name(x1, x2) of Arrays (or an Array and a scalar) on the hot path,
 * or None for the Python path. */
static PyObject *binary(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int declined = not_now(nargs, 3, "binary(name, x1, x2)");
    if (declined)
        return declined_call(declined, args, nargs);
    PyObject *name = args[0], *x1 = args[1], *x2 = args[2];
    PyObject *key = NULL, *b, *n1, *n2, *d1 = NULL, *d2 = NULL;
    int arrays = 0, scalar_first = 0;
    if (Py_TYPE(x1) == (PyTypeObject *)Array_type) {
        b = SLOT(x1, off_b);
        if (b == NULL || SLOT(x1, off_a) == NULL)
            Py_RETURN_NONE;
        if (Py_TYPE(x2) == (PyTypeObject *)Array_type) {
            PyObject *b2 = SLOT(x2, off_b);
            if (b2 == NULL || SLOT(x2, off_a) == NULL || !same_backend(b, b2))
                Py_RETURN_NONE;
            if (is_numpy(b)) {  /* the cpu device: NumPy's ufunc (cpu_calls.c) */
                PyObject *natives[2] = {SLOT(x1, off_a), SLOT(x2, off_a)};
                return cpu_call(name, natives, 2, NULL, b, ndarray_type);
            }
            arrays = 2;
        } else {
            int scalar = PySet_Contains(scalar_types, (PyObject *)Py_TYPE(x2));
            if (scalar < 0)
                return NULL;
            if (!scalar)
                Py_RETURN_NONE;
            if (is_numpy(b)) {
                PyObject *natives[2] = {SLOT(x1, off_a), x2};
                return cpu_call(name, natives, 2, NULL, b, ndarray_type);
            }
            arrays = 1;
        }
    } else if (Py_TYPE(x2) == (PyTypeObject *)Array_type) {
        int scalar = PySet_Contains(scalar_types, (PyObject *)Py_TYPE(x1));
        if (scalar < 0)
            return NULL;
        b = SLOT(x2, off_b);
        if (!scalar || b == NULL || SLOT(x2, off_a) == NULL)
            Py_RETURN_NONE;
        if (is_numpy(b)) {
            PyObject *natives[2] = {x1, SLOT(x2, off_a)};
            return cpu_call(name, natives, 2, NULL, b, ndarray_type);
        }
        arrays = 1;
        scalar_first = 1;
    } else {
        Py_RETURN_NONE;
    }
    PyObject *k1, *k2;
    if (arrays == 2) {
        k1 = layout_key(x1);
        if (k1 == NULL)
            return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
        k2 = layout_key(x2);
        if (k2 == NULL) {
            Py_DECREF(k1);
            return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
        }
        n1 = SLOT(x1, off_a);
        n2 = SLOT(x2, off_a);
        d1 = SLOT(x1, off_d);
        d2 = SLOT(x2, off_d);
    } else {
        PyObject *array = scalar_first ? x2 : x1, *scalar = scalar_first ? x1 : x2;
        PyObject *k = layout_key(array);
        if (k == NULL)
            return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
        PyObject *kind = (PyObject *)Py_TYPE(scalar);
        Py_INCREF(kind);
        k1 = scalar_first ? kind : k;
        k2 = scalar_first ? k : kind;
        n1 = SLOT(array, off_a);
        n2 = scalar;
        d1 = SLOT(array, off_d);
    }
    key = PyTuple_Pack(3, name, k1, k2);
    Py_DECREF(k1);
    Py_DECREF(k2);
    return serve_key(key, b, n1, n2, d1, d2, arrays, scalar_first);
}

/* unary(name, x): name(x) of an Array on the hot path, or None for the Python path. */
static PyObject *unary(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int declined = not_now(nargs, 2, "unary(name, x)");
    if (declined)
        return declined_call(declined, args, nargs);
    PyObject *name = args[0], *x = args[1];
    if (Py_TYPE(x) != (PyTypeObject *)Array_type)
        Py_RETURN_NONE;
    PyObject *b = SLOT(x, off_b);
    if (b == NULL || SLOT(x, off_a) == NULL)
        Py_RETURN_NONE;
    if (is_numpy(b))  /* the cpu device: NumPy's ufunc (cpu_calls.c) */
        return cpu_call(name, &SLOT(x, off_a), 1, NULL, b, ndarray_type);
    PyObject *k = layout_key(x);
    if (k == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    PyObject *key = PyTuple_Pack(2, name, k);
    Py_DECREF(k);
    return serve_key(key, b, SLOT(x, off_a), NULL, SLOT(x, off_d), NULL, 1, 0);
}

/* The entry of `table` (borrowed) under the key of a fused call on `operands` (each Array's
 * layout id, each scalar's type: `kinds` holds the hot scalar types), then `out`'s layout id
 * when `out` is not NULL (FusedFunction.__call__'s key, _ids_into's); NULL without an error
 * for a miss or an operand the key does not take (with `settled_only`, an Array whose value is
 * pending), NULL with one on an error. */
static PyObject *entry_for(PyObject *table, PyObject *kinds, PyObject *operands, PyObject *out,
                           int settled_only) {
    Py_ssize_t n = PyTuple_GET_SIZE(operands), size = out == NULL ? n : n + 1;
    PyObject *key = PyTuple_New(size);
    if (key == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *a = i < n ? PyTuple_GET_ITEM(operands, i) : out, *item;
        if (Py_TYPE(a) == (PyTypeObject *)Array_type) {
            item = !settled_only || SLOT(a, off_p) == Py_None ? layout_key(a) : NULL;
            if (item == NULL) {
                Py_DECREF(key);
                return NULL;
            }
        } else {
            int scalar = PySet_Contains(kinds, (PyObject *)Py_TYPE(a));
            if (scalar <= 0) {
                Py_DECREF(key);
                return NULL;
            }
            item = (PyObject *)Py_TYPE(a);
            Py_INCREF(item);
        }
        PyTuple_SET_ITEM(key, i, item);
    }
    PyObject *entry = PyDict_GetItemWithError(table, key);  /* borrowed */
    Py_DECREF(key);
    return entry;
}

/* fused(by_ids, scalar_types, args): a fused function's call on Arrays
 * and scalars (namespace/fusion.py FusedFunction._launch_ids): keyed by each Array's layout
 * id and each scalar's type in `by_ids`, launched on the emulator from the plan's template
 * `prepared.template` = (checks, outputs, head, kernel, grid, block, flags, scalar_args,
 * returns), outputs = ((dtype, 16-byte mask), ...), packed as (*head, flag, *outputs,
 * *inputs), head[0] the scalars seen for the call's scalar arguments when it has any
 * (scalars_seen); returns None for one output (an Array settled with the plan's layout id),
 * else `tuple` or `list` of the output Arrays (settled at their first use). A GPU's goes to
 * run_fused_compiled. None for the Python path. */
static PyObject *fused(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[0]) || !PyTuple_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "fused(by_ids, scalar_types, args)");
        return NULL;
    }
    if (Array_type == NULL)
        Py_RETURN_NONE;
    PyObject *operands = args[2];
    PyObject *prepared = entry_for(args[0], args[1], operands, NULL, 0);  /* borrowed */
    if (prepared == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    Py_INCREF(prepared);
    PyObject *template = PyObject_GetAttr(prepared, template_name);
    PyObject *shape = template == NULL ? NULL : PyObject_GetAttr(prepared, shape_name);
    PyObject *r = NULL, *inputs = NULL, *outs = NULL, *packed = NULL, *seen = NULL;
    if (shape == NULL)
        goto done;
    if (template == Py_None) {  /* a GPU's prepared call: its launch record, if it has one */
        PyObject *record = PyObject_GetAttr(prepared, compiled_launch_name);
        if (record == NULL)
            goto done;
        r = record == Py_None ? NULL : run_fused_compiled(prepared, record, operands, NULL);
        Py_DECREF(record);
        if (r == NULL && !PyErr_Occurred())
            goto decline;
        goto done;
    }
    if (!PyTuple_CheckExact(template) || PyTuple_GET_SIZE(template) != 9)
        goto decline;
    PyObject **t = &PyTuple_GET_ITEM(template, 0), *returns = t[8];
    /* checks: (k, unwrap, align_mask, vector_mask) per input, each an Array (the key) */
    if (!PyTuple_CheckExact(t[0]) || !PyTuple_CheckExact(t[1]) || PyTuple_GET_SIZE(t[1]) < 1 ||
        !PyTuple_CheckExact(t[2]) || PyTuple_GET_SIZE(t[2]) < 1 || !PyTuple_CheckExact(t[6]) ||
        PyTuple_GET_SIZE(t[6]) != 2 ||
        (returns != Py_None && returns != (PyObject *)&PyTuple_Type &&
         returns != (PyObject *)&PyList_Type) ||
        (returns == Py_None && PyTuple_GET_SIZE(t[1]) != 1))
        goto decline;
    if (t[7] != Py_None) {  /* the scalar arguments' slots, kept per their objects */
        seen = scalars_seen(t[7], operands);
        if (seen == NULL)
            goto done;
        if (seen == Py_None)
            goto decline;  /* a computed scalar of another type: the Python way's fallback */
    }
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(t[0]), n_outputs = PyTuple_GET_SIZE(t[1]);
    inputs = PyTuple_New(n_inputs);
    if (inputs == NULL)
        goto done;
    unsigned long long misaligned = 0;
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        PyObject *check = PyTuple_GET_ITEM(t[0], i), *x = checked_array(check, operands);
        if (x == NULL)
            goto decline;
        unsigned long long address = as_bits(SLOT(x, off_d));
        if (address & as_bits(PyTuple_GET_ITEM(check, 2)))
            goto decline;  /* off its C++ type's alignment: the Python path's fallback */
        misaligned |= address & as_bits(PyTuple_GET_ITEM(check, 3));
        Py_INCREF(SLOT(x, off_a));
        PyTuple_SET_ITEM(inputs, i, SLOT(x, off_a));
    }
    outs = PyTuple_New(n_outputs);
    if (outs == NULL)
        goto done;
    int settled = 0;
    unsigned long long address = 0;  /* the one output's */
    for (Py_ssize_t i = 0; i < n_outputs; i++) {
        PyObject *output = PyTuple_GET_ITEM(t[1], i);  /* (dtype, 16-byte mask) */
        if (!PyTuple_CheckExact(output) || PyTuple_GET_SIZE(output) != 2)
            goto decline;
        PyObject *out = allocate(shape, PyTuple_GET_ITEM(output, 0), &settled);
        if (out == NULL) {
            if (PyErr_Occurred())
                goto done;
            goto decline;
        }
        PyTuple_SET_ITEM(outs, i, out);
        address = data_pointer(out);
        misaligned |= address & as_bits(PyTuple_GET_ITEM(output, 1));
    }
    Py_ssize_t n_head = PyTuple_GET_SIZE(t[2]);
    packed = PyTuple_New(n_head + 1 + n_outputs + n_inputs);
    if (packed == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n_head; i++) {
        PyObject *item = i == 0 && seen != NULL ? PyTuple_GET_ITEM(seen, 1)
                                                : PyTuple_GET_ITEM(t[2], i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(packed, i, item);
    }
    PyObject *flag = PyTuple_GET_ITEM(t[6], misaligned ? 0 : 1);  /* flags[not misaligned] */
    Py_INCREF(flag);
    PyTuple_SET_ITEM(packed, n_head, flag);
    for (Py_ssize_t i = 0; i < n_outputs + n_inputs; i++) {
        PyObject *item = i < n_outputs ? PyTuple_GET_ITEM(outs, i)
                                       : PyTuple_GET_ITEM(inputs, i - n_outputs);
        Py_INCREF(item);
        PyTuple_SET_ITEM(packed, n_head + 1 + i, item);
    }
    if (launch_packed(t[3], t[4], t[5], packed) < 0)
        goto done;
    r = returned_outputs(prepared, outs, emulate, returns, address, settled);
    goto done;
decline:
    Py_INCREF(Py_None);
    r = Py_None;
done:
    Py_XDECREF(seen);
    Py_XDECREF(packed);
    Py_XDECREF(outs);
    Py_XDECREF(inputs);
    Py_XDECREF(shape);
    Py_XDECREF(template);
    Py_DECREF(prepared);
    return r;
}

/* fused_into(into_by_ids, scalar_types, args, out): a fused function's call on Arrays and
 * scalars into the Array `out` (namespace/fusion.py FusedFunction.__call__ with out=, keyed
 * as its _ids_into: each Array's layout id, each scalar's type, out's layout id), from the
 * record of namespace/fused_out.py into_record: (backend, device, checks, out_checks,
 * out_mask, head, kernel, grid, block, flags, scalar_args, prepared, [a GPU's launch
 * record]). On the emulator (device None) run_into's steps: the scalar arguments' slots
 * (scalars_seen), the inputs aligned, `out` writeable and clear of them (out_clear), the
 * launch of (*head, flag, out, *inputs); a GPU's goes to run_fused_compiled when the record
 * holds a launch record. `out`, or None for the Python path (nothing written). The caller
 * has checked pending reads. */
static PyObject *fused_into(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyDict_Check(args[0]) || !PyTuple_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "fused_into(into_by_ids, scalar_types, args, out)");
        return NULL;
    }
    PyObject *operands = args[2], *out_array = args[3];
    if (Array_type == NULL || Py_TYPE(out_array) != (PyTypeObject *)Array_type ||
        SLOT(out_array, off_a) == NULL || SLOT(out_array, off_p) != Py_None)
        Py_RETURN_NONE;
    Py_ssize_t n = PyTuple_GET_SIZE(operands);
    if (n > 64)
        Py_RETURN_NONE;
    PyObject *record = entry_for(args[0], args[1], operands, out_array, 1);  /* borrowed */
    if (record == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) != 13)
        Py_RETURN_NONE;
    Py_INCREF(record);
    PyObject **t = &PyTuple_GET_ITEM(record, 0), *r = NULL, *inputs = NULL, *packed = NULL,
             *seen = NULL;
    if (t[1] != Py_None) {  /* a GPU's: its launch record, once a repeat made one */
        PyObject *launch_record = NULL;
        if (PyList_CheckExact(t[12]) && PyList_GET_SIZE(t[12]) == 1) {
            launch_record = PyList_GET_ITEM(t[12], 0);  /* one read, held */
            Py_INCREF(launch_record);
        }
        if (launch_record != NULL && launch_record != Py_None)
            r = run_fused_compiled(NULL, launch_record, operands, out_array);
        Py_XDECREF(launch_record);
        if (r == NULL && !PyErr_Occurred())
            goto decline;
        goto done;
    }
    PyObject *out = SLOT(out_array, off_a);
    if (!flags_readable || !PyTuple_CheckExact(t[2]) || !PyTuple_CheckExact(t[5]) ||
        PyTuple_GET_SIZE(t[5]) < 1 || !PyTuple_CheckExact(t[9]) || PyTuple_GET_SIZE(t[9]) != 2 ||
        Py_TYPE(out) != (PyTypeObject *)ndarray_type ||
        !(((numpy_fields *)out)->flags & NPY_ARRAY_WRITEABLE))
        goto decline;
    unsigned long long out_address = as_bits(SLOT(out_array, off_d));
    if (out_address != data_pointer(out))
        goto decline;
    if (t[10] != Py_None) {  /* the scalar arguments' slots, kept per their objects */
        seen = scalars_seen(t[10], operands);
        if (seen == NULL)
            goto done;
        if (seen == Py_None)
            goto decline;
    }
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(t[2]);
    inputs = PyTuple_New(n_inputs);
    if (inputs == NULL)
        goto done;
    unsigned long long misaligned = 0, address[64] = {0};
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        PyObject *check = PyTuple_GET_ITEM(t[2], i), *x = checked_array(check, operands);
        if (x == NULL)
            goto decline;
        unsigned long long at = as_bits(SLOT(x, off_d));
        if (at & as_bits(PyTuple_GET_ITEM(check, 2)))
            goto decline;  /* off its C++ type's alignment: the Python path's fallback */
        misaligned |= at & as_bits(PyTuple_GET_ITEM(check, 3));
        address[PyLong_AsSsize_t(PyTuple_GET_ITEM(check, 0))] = at;  /* checked: k < n */
        Py_INCREF(SLOT(x, off_a));
        PyTuple_SET_ITEM(inputs, i, SLOT(x, off_a));
    }
    if (!out_clear(t[3], out_address, address, n, -1))
        goto decline;
    misaligned |= out_address & as_bits(t[4]);
    Py_ssize_t n_head = PyTuple_GET_SIZE(t[5]);
    packed = PyTuple_New(n_head + 2 + n_inputs);
    if (packed == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n_head; i++) {
        PyObject *item = i == 0 && seen != NULL ? PyTuple_GET_ITEM(seen, 1)
                                                : PyTuple_GET_ITEM(t[5], i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(packed, i, item);
    }
    PyObject *flag = PyTuple_GET_ITEM(t[9], misaligned ? 0 : 1);  /* flags[not misaligned] */
    Py_INCREF(flag);
    PyTuple_SET_ITEM(packed, n_head, flag);
    Py_INCREF(out);
    PyTuple_SET_ITEM(packed, n_head + 1, out);
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        PyObject *item = PyTuple_GET_ITEM(inputs, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(packed, n_head + 2 + i, item);
    }
    if (launch_packed(t[6], t[7], t[8], packed) < 0)
        goto done;
    Py_INCREF(out_array);
    r = out_array;
    goto done;
decline:
    Py_INCREF(Py_None);
    r = Py_None;
done:
    Py_XDECREF(seen);
    Py_XDECREF(packed);
    Py_XDECREF(inputs);
    Py_DECREF(record);
    return r;
}

/* A call into `out` (an Array) on the emulator from native = the 16 fields of run_native's
 * and t[16] = short_path's out_check (align_mask, lo, hi, ((k, x_lo, x_hi, same), ...)):
 * short_path.run's checks of out= (writeable, aligned, overlapping no input but in its very
 * layout) and its launch. operands[k]: operand k's native array (address[k]) or, at the
 * plan's scalar index t[13], its scalar (address 0). Returns `out` itself, or Py_None (new
 * references), or NULL. */
static PyObject *run_native_into(PyObject *native, PyObject *out_array, PyObject **operands,
                                 const unsigned long long *address) {
    if (!flags_readable || !PyTuple_CheckExact(native) || PyTuple_GET_SIZE(native) != 17)
        Py_RETURN_NONE;
    PyObject **t = &PyTuple_GET_ITEM(native, 0);
    long arrays = PyLong_AsLong(t[0]), scalar_at = PyLong_AsLong(t[13]);
    if (PyErr_Occurred() || arrays < 1 || arrays > 2 || scalar_at > 1 ||
        (scalar_at >= 0 && arrays != 1)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    /* the arrays in kernel order: n1 (and n2), at a1 (and a2); a scalar's array is n1 */
    int first = scalar_at == 0 ? 1 : 0;
    PyObject *n1 = operands[first], *n2 = arrays == 2 ? operands[1] : NULL;
    unsigned long long a1 = address[first], a2 = arrays == 2 ? address[1] : 0;
    unsigned long long align1 = as_bits(t[9]), vector1 = as_bits(t[10]);
    unsigned long long align2 = arrays == 2 ? as_bits(t[11]) : 0;
    unsigned long long vector2 = arrays == 2 ? as_bits(t[12]) : 0;
    PyObject *out = SLOT(out_array, off_a);
    if (a1 & align1 || a2 & align2 || out == NULL || Py_TYPE(out) != (PyTypeObject *)ndarray_type)
        Py_RETURN_NONE;
    unsigned long long out_address = as_bits(SLOT(out_array, off_d));
    if (out_address != data_pointer(out) || !(((numpy_fields *)out)->flags & NPY_ARRAY_WRITEABLE)
        || !out_clear(t[16], out_address, address, 2, scalar_at))
        Py_RETURN_NONE;
    int misaligned = (a1 & vector1) || (a2 & vector2) || (out_address & as_bits(t[3]));
    PyObject *seen = NULL, *tail = misaligned ? t[7] : t[8];
    if (scalar_at >= 0) {  /* the scalar's tails (its value by value) */
        seen = scalar_seen(t[14], t[15], operands[scalar_at]);
        if (seen == NULL || seen == Py_None)
            return seen;
        tail = PyTuple_GET_ITEM(seen, misaligned ? 1 : 2);
    }
    int failed = !PyTuple_CheckExact(tail) ? 1
                 : pack_and_launch(t, out, n1, scalar_at >= 0 ? operands[scalar_at] : n2,
                                   arrays, scalar_at, tail);
    Py_XDECREF(seen);
    if (failed)
        return failed < 0 ? NULL : (Py_INCREF(Py_None), Py_None);
    Py_INCREF(out_array);
    return out_array;
}

/* into(name, x, out) or into(name, x1, x2, out): name(..., out=out) of Arrays (or an Array
 * and a Python or NumPy scalar) into the Array `out` (out=, the in-place operators: z += x,
 * z *= 2.0) on the hot path (boundary._into's key: each operand's layout id or scalar type,
 * then out's; short_path.into_by_ids): `out`, or None for the Python path. The caller has
 * checked xp.lazy() and pending reads. */
static PyObject *into(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 && nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "into(name, x, out) or into(name, x1, x2, out)");
        return NULL;
    }
    if (Array_type == NULL)
        Py_RETURN_NONE;
    PyObject *out = args[nargs - 1];
    Py_ssize_t n = nargs - 2;
    if (Py_TYPE(out) != (PyTypeObject *)Array_type)
        Py_RETURN_NONE;
    PyObject *b = SLOT(out, off_b);
    if (b == NULL || SLOT(out, off_a) == NULL || SLOT(out, off_p) != Py_None)
        Py_RETURN_NONE;
    int scalars = 0;
    for (Py_ssize_t i = 1; i <= n; i++) {
        PyObject *x = args[i];
        if (Py_TYPE(x) != (PyTypeObject *)Array_type) {
            int scalar = PySet_Contains(scalar_types, (PyObject *)Py_TYPE(x));
            if (scalar < 0)
                return NULL;
            if (!scalar || ++scalars == n)
                Py_RETURN_NONE;  /* not a hot scalar, or no array at all */
        } else if (SLOT(x, off_a) == NULL || SLOT(x, off_p) != Py_None ||
                   SLOT(x, off_b) == NULL || !same_backend(SLOT(x, off_b), b))
            Py_RETURN_NONE;
    }
    if (is_numpy(b)) {  /* the cpu device: NumPy's ufunc into out (cpu_calls.c) */
        PyObject *natives[2] = {NULL, NULL};
        for (Py_ssize_t i = 0; i < n; i++)
            natives[i] = Py_TYPE(args[1 + i]) == (PyTypeObject *)Array_type
                         ? SLOT(args[1 + i], off_a) : args[1 + i];
        return cpu_call(args[0], natives, n, SLOT(out, off_a), b, ndarray_type);
    }
    PyObject *key = PyTuple_New(n + 2);
    if (key == NULL)
        return NULL;
    Py_INCREF(args[0]);
    PyTuple_SET_ITEM(key, 0, args[0]);
    for (Py_ssize_t i = 1; i <= n + 1; i++) {
        PyObject *x = i <= n ? args[i] : out, *k;
        if (Py_TYPE(x) == (PyTypeObject *)Array_type) {
            k = layout_key(x);
            if (k == NULL) {
                Py_DECREF(key);
                return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
            }
        } else {
            k = (PyObject *)Py_TYPE(x);  /* a scalar: its type, as boundary._into keys it */
            Py_INCREF(k);
        }
        PyTuple_SET_ITEM(key, i, k);
    }
    PyObject *known = PyDict_GetItemWithError(into_by_ids, key);  /* borrowed */
    Py_DECREF(key);
    if (known == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    Py_INCREF(known);
    /* each operand's native array and settled pointer, or the scalar itself and 0 */
    PyObject *operands[2] = {NULL, NULL}, *pointers[2] = {NULL, NULL};
    unsigned long long address[2] = {0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = args[1 + i];
        int array = Py_TYPE(x) == (PyTypeObject *)Array_type;
        operands[i] = array ? SLOT(x, off_a) : x;
        pointers[i] = array ? SLOT(x, off_d) : NULL;
        address[i] = array ? as_bits(pointers[i]) : 0;
    }
    PyObject *native = PyObject_GetAttr(known, native_name), *r = NULL;
    PyObject *record = native == NULL || native != Py_None ? NULL
                       : PyObject_GetAttr(known, compiled_launch_name);
    if (native != NULL && native != Py_None) {
        r = run_native_into(native, out, operands, address);
    } else if (record != NULL && record != Py_None) {  /* a GPU's, under the compiled launch */
        Py_ssize_t s = n == 2 && Py_TYPE(args[1]) != (PyTypeObject *)Array_type ? 0
                       : n == 2 && Py_TYPE(args[2]) != (PyTypeObject *)Array_type ? 1 : -1;
        PyObject *natives[2] = {operands[s == 0 ? 1 : 0], s < 0 && n == 2 ? operands[1] : NULL};
        unsigned long long kernel_address[2] = {address[s == 0 ? 1 : 0],
                                                s < 0 && n == 2 ? address[1] : 0};
        r = run_compiled(known, record, b, natives, kernel_address, s < 0 ? NULL : operands[s],
                         (long)s, out);
    }
    if (r == NULL && !PyErr_Occurred() && native == Py_None) {
        /* short_path.run(known, natives, out, b, (addresses, out's)), through boundary, which
           makes a GPU's launch record for the next call */
        PyObject *natives = n == 2 ? PyTuple_Pack(2, operands[0], operands[1])
                                   : PyTuple_Pack(1, operands[0]);
        PyObject *zero = PyLong_FromLong(0);
        PyObject *addresses = zero == NULL ? NULL
                              : PyList_New(3);
        PyObject *read = NULL;
        if (addresses != NULL) {
            PyObject *items[3] = {pointers[0] ? pointers[0] : zero,
                                  pointers[1] ? pointers[1] : zero, zero};
            for (int i = 0; i < 3; i++) {
                Py_INCREF(items[i]);
                PyList_SET_ITEM(addresses, i, items[i]);
            }
            read = PyTuple_Pack(2, addresses, SLOT(out, off_d) ? SLOT(out, off_d) : zero);
        }
        if (natives != NULL && read != NULL) {
            PyObject *stack[5] = {known, natives, SLOT(out, off_a), b, read};
            Py_INCREF(b);
            PyObject *done = PyObject_Vectorcall(run_function, stack, 5, NULL);
            Py_DECREF(b);
            if (done != NULL) {
                r = done == Py_None ? Py_None : out;
                Py_INCREF(r);
                Py_DECREF(done);
            }
        }
        Py_XDECREF(natives);
        Py_XDECREF(zero);
        Py_XDECREF(addresses);
        Py_XDECREF(read);
    }
    Py_XDECREF(record);
    Py_XDECREF(native);
    Py_DECREF(known);
    return r;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Array, by_ids, scalar_types, lazy_var, allocator_var, hooks, launch, empty, "
     "settle, learn_out_id, finish, source, numpy_backend, into_by_ids, a writeable and a "
     "read-only ndarray, run)"},
    {"configure_cpu", configure_cpu, METH_VARARGS,
     "configure_cpu(plain_calls, plain_calls_into, errstate_var, ignore_all, asarray, sample)"},
    {"configure_lazy", configure_lazy, METH_VARARGS,
     "configure_lazy(pending's namespace, PendingExpression, Tape, ChainState, lock, "
     "register_seen, scalar_types, the lazy ContextVar, the logger)"},
    {"evaluate_seen", (PyCFunction)(void (*)(void))evaluate_seen, METH_FASTCALL,
     "evaluate_seen(): True once a chain seen before is computed, or None"},
    {"binary", (PyCFunction)(void (*)(void))binary, METH_FASTCALL,
     "binary(name, x1, x2): the hot call's Array (inside lazy(), a deferred one), or None"},
    {"unary", (PyCFunction)(void (*)(void))unary, METH_FASTCALL,
     "unary(name, x): the hot call's Array (inside lazy(), a deferred one), or None"},
    {"into", (PyCFunction)(void (*)(void))into, METH_FASTCALL,
     "into(name, x, out) / into(name, x1, x2, out): out, or None"},
    {"fused", (PyCFunction)(void (*)(void))fused, METH_FASTCALL,
     "fused(by_ids, scalar_types, args): the fused call's Array, or None"},
    {"fused_into", (PyCFunction)(void (*)(void))fused_into, METH_FASTCALL,
     "fused_into(into_by_ids, scalar_types, args, out): out, written, or None"},
    {"floats_within", (PyCFunction)(void (*)(void))floats_within, METH_FASTCALL,
     "floats_within(x, low, high): low < v < high for every value of x, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "hot_calls", "The compiled hot path of elementwise calls on Arrays.",
    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hot_calls(void) {
    PyObject *m = PyModule_Create(&module_definition);
    if (m == NULL)
        return NULL;
    if (add_compiled_launch(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
