/* A GPU's launches through the driver, from C (INFINI_CUPY_LAUNCH=compiled,
 * runtime/cuda_compiled.py, docs/dev/launch.md): libcuda's cuLaunchKernel and
 * cuCtxGetCurrent called through their addresses (set_driver), on a launch record's
 * parameters packed once, the pointers written per call.
 *
 * What runs here: a repeated one-launch elementwise call of Arrays (of arrays, with a
 * scalar, into out=; run_compiled, from hot_calls.c's serve and into), a fused call (into a
 * new output or out=; run_fused_compiled, from hot_calls.c's fused and fused_into) and a copy
 * (rearrange), each from its launch record (short_path.compiled_launch_record,
 * fusion.compiled_fused_record, strided.copy.compiled_copy_record, made in Python); and the
 * module functions of the mechanism's other launches (launch_kernel) and of its driver
 * (set_driver, forget_driver, current_context). Every check that fails returns NULL with no
 * error set (or None to Python), nothing written: the Python way decides.
 */
#include "compiled_launch.h"
#include "hot_arrays.h"

/* The compiled launch's driver entry points (set_driver: libcuda's, or a stand-in's), with
 * CUresult as an int and handles as pointers, as cuda.h declares them. */
typedef int (*launch_kernel_entry)(void *function, unsigned int grid_x, unsigned int grid_y,
                                   unsigned int grid_z, unsigned int block_x,
                                   unsigned int block_y, unsigned int block_z,
                                   unsigned int shared_mem, void *stream, void **params,
                                   void **extra);
typedef int (*current_context_entry)(void **context);
static launch_kernel_entry driver_launch;
static current_context_entry driver_context;
static long driver_generation;  /* set_driver's count: records of an older driver are stale */
static PyObject *mechanism, *compiled_name, *check_status, *device_array, *current_stream,
    *copy_records, *data_name, *ptr_name, *device_id_name;
/* One launch's packed parameters at most: a stack buffer per call (cuda_compiled checks a
 * record against both before making it). */
#define PARAMS_BYTES 1024
#define PARAMS_COUNT 64
#define RECORD_FIELDS 20  /* a launch record's length (short_path reads it here) */
#define COPY_RECORD_FIELDS 11  /* a copy's launch record's length */
#define FUSED_RECORD_FIELDS 15  /* a fused call's launch record's length */
#define POINTER_SLOTS 4   /* (out, x1, x2 or out, out): the elementwise kernels' pointers */

/* The names this file reads, made once (set_driver). */
static int intern_driver_names(void) {
    if (data_name != NULL)
        return 0;
    data_name = PyUnicode_InternFromString("data");
    ptr_name = PyUnicode_InternFromString("ptr");
    device_id_name = PyUnicode_InternFromString("device_id");
    if (!data_name || !ptr_name || !device_id_name) {
        Py_CLEAR(data_name);  /* tried again at the next call */
        return -1;
    }
    return 0;
}

/* 1 when the outputs are CuPy's (no arrays.outputs_from allocator in force), 0 when another
 * allocator's, -1 on an error. */
static int outputs_own(void) {
    PyObject *allocator;
    if (PyContextVar_Get(allocator_var, NULL, &allocator) < 0)
        return -1;
    int own = allocator == NULL || allocator == Py_None;
    Py_XDECREF(allocator);
    return own;
}

/* An attribute that holds an int, as a C integer (-1 with an error set when it does not). */
static long long int_attribute(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL)
        return -1;
    long long r = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return r;
}

/* A CuPy array's device pointer and device (its MemoryPointer's ptr and device_id); -1 on
 * an error. */
static int device_pointer(PyObject *array, unsigned long long *pointer, long long *device) {
    PyObject *memory = PyObject_GetAttr(array, data_name);
    if (memory == NULL)
        return -1;
    long long ptr = int_attribute(memory, ptr_name);
    long long id = ptr == -1 && PyErr_Occurred() ? -1 : int_attribute(memory, device_id_name);
    Py_DECREF(memory);
    if (id == -1 && PyErr_Occurred())
        return -1;
    *pointer = (unsigned long long)ptr;
    if (device != NULL)
        *device = id;
    return 0;
}

/* 1 when the cuda launcher launches through this file (config.launch_in_force[0] is "compiled"),
 * 0 when not. */
static int compiled_now(void) {
    if (driver_launch == NULL || !PyList_CheckExact(mechanism) || PyList_GET_SIZE(mechanism) < 1)
        return 0;
    return same_backend(PyList_GET_ITEM(mechanism, 0), compiled_name);
}

/* cuLaunchKernel through its address, the GIL released as CuPy's launch releases it; a
 * status other than success goes to CuPy's check_status, which raises its driver error. */
static int launch_on_driver(void *function, const unsigned int *dims, void *stream,
                            void **params) {
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = driver_launch(function, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
                           dims[6], stream, params, NULL);
    Py_END_ALLOW_THREADS
    if (status == 0)
        return 0;
    PyObject *r = PyObject_CallFunction(check_status, "i", status);
    if (r != NULL) {
        Py_DECREF(r);
        PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel returned %d", status);
    }
    return -1;
}

/* The parameters of a launch record (its bytes `packed` with `count` uint32 `offsets`), the
 * `n` pointers written in at the offsets of parameters first..first+n-1 on a stack copy,
 * launched on `stream`: 0, or -1 with an error set (a record whose offsets lie past its
 * bytes, or the driver's refusal). */
static int launch_with_pointers(void *function, const unsigned int *dims, PyObject *packed,
                                PyObject *offsets, const uint64_t *pointers, Py_ssize_t n,
                                Py_ssize_t first, void *stream) {
    _Alignas(16) unsigned char buffer[PARAMS_BYTES];
    void *params[PARAMS_COUNT];
    Py_ssize_t size = PyBytes_GET_SIZE(packed), count = PyBytes_GET_SIZE(offsets) / 4;
    if (size > PARAMS_BYTES || count > PARAMS_COUNT || first < 0 || first + n > count) {
        PyErr_SetString(PyExc_ValueError, "a launch record's parameters exceed its buffer");
        return -1;
    }
    memcpy(buffer, PyBytes_AS_STRING(packed), (size_t)size);
    const unsigned char *at = (const unsigned char *)PyBytes_AS_STRING(offsets);
    for (Py_ssize_t i = 0; i < count; i++) {
        uint32_t offset;
        memcpy(&offset, at + 4 * i, 4);
        int pointer = i >= first && i < first + n;
        if (offset >= (uint32_t)size || (pointer && offset + 8 > (uint32_t)size)) {
            PyErr_SetString(PyExc_ValueError, "a launch record's offset lies past its bytes");
            return -1;
        }
        if (pointer)
            memcpy(buffer + offset, &pointers[i - first], 8);
        params[i] = buffer + offset;
    }
    return launch_on_driver(function, dims, stream, params);
}

/* CuPy's current stream (get_current_stream().ptr) into *stream; -1 on an error. */
static int cupy_stream(void **stream) {
    PyObject *stream_object = PyObject_CallNoArgs(current_stream);
    if (stream_object == NULL)
        return -1;
    long long ptr = int_attribute(stream_object, ptr_name);
    Py_DECREF(stream_object);
    if (ptr == -1 && PyErr_Occurred())
        return -1;
    *stream = (void *)(uintptr_t)ptr;
    return 0;
}

/* A launch record's 7 dims (grid, block, dynamic shared memory) and its function handle
 * and context: 0, or -1 (no error set) when they are not what cuda_compiled makes. */
static int record_dims(PyObject *dims_tuple, PyObject *function_int, PyObject *context_int,
                       unsigned int *dims, void **function, void **context) {
    if (!PyTuple_CheckExact(dims_tuple) || PyTuple_GET_SIZE(dims_tuple) != 7)
        return -1;
    for (int i = 0; i < 7; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(dims_tuple, i));
        if (PyErr_Occurred() || v > 0xFFFFFFFFUL) {
            PyErr_Clear();
            return -1;
        }
        dims[i] = (unsigned int)v;
    }
    *function = PyLong_AsVoidPtr(function_int);
    *context = PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(context_int);
    if (PyErr_Occurred() || *function == NULL || *context == NULL) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* 1 when this thread's current context is `context`; 0 when not (none, or another
 * device's). */
static int context_is(void *context) {
    void *current = NULL;
    return driver_context(&current) == 0 && current == context;
}

/* `seen` (a new reference from scalar_seen or scalars_seen: a tuple (values, params off,
 * params on), Py_None or NULL) when both packings are bytes of `template`'s size, with
 * `*off` and `*on` set to them; else NULL, `seen` released (the Python way, or an error). */
static PyObject *packed_seen(PyObject *seen, PyObject *template, PyObject **off,
                             PyObject **on) {
    if (seen == NULL || seen == Py_None) {
        Py_XDECREF(seen);
        return NULL;
    }
    PyObject *made_off = PyTuple_GET_ITEM(seen, 1), *made_on = PyTuple_GET_ITEM(seen, 2);
    if (!PyBytes_CheckExact(made_off) || !PyBytes_CheckExact(made_on) ||
        PyBytes_GET_SIZE(made_off) != PyBytes_GET_SIZE(template) ||
        PyBytes_GET_SIZE(made_on) != PyBytes_GET_SIZE(template)) {
        Py_DECREF(seen);
        return NULL;
    }
    *off = made_off;
    *on = made_on;
    return seen;
}

/* Whether a launch record (its driver generation, 7 dims, function handle and context, as
 * every record holds them) may launch now, its dims and function read into `dims` and
 * `function`: 0 launch, 1 make the call but skip the launch (a thread that skips launches),
 * 2 decline (a stale record, a recording thread: launch() records, then launches; no
 * context current, or another device's), -1 an error set. */
static int record_live(PyObject *generation, PyObject *dims_tuple, PyObject *function_int,
                       PyObject *context_int, unsigned int *dims, void **function) {
    void *context;
    if (PyLong_AsLong(generation) != driver_generation || PyErr_Occurred() ||
        record_dims(dims_tuple, function_int, context_int, dims, function, &context) < 0) {
        PyErr_Clear();
        return 2;
    }
    int state = hooks_state();
    if (state < 0 || state == 2)
        return state;
    return context_is(context) ? state : 2;
}

/* The one-launch call on a GPU from its launch record (short_path.compiled_launch_record:
 * (arrays, shape, dtype_out, out_mask, align1, vector1, align2, vector2, generation,
 * context, device, function, dims, params off, params on, offsets, scalar_at, last,
 * bytes_for, out_check)): the kernel's arrays natives[0] (and natives[1]) at device pointers
 * address[0] (and address[1]), `scalar` the Python or NumPy scalar of a plan of one array
 * and one scalar at operand `scalar_at` (else NULL and -1), into a new output or into the
 * Array `out_array` (out=, the in-place operators; NULL: a new output). The record is this
 * thread's current context's and device's; a new output comes from CuPy; the kernel's
 * parameters are the record's bytes (the scalar's, by value) with the four pointers written
 * in. Returns the output Array (settled) or `out_array`, or NULL: with an error set (of the
 * allocation or the launch), or without one when the Python way must take the call (another
 * mechanism, a recording thread, another allocator, context or device, an input off its
 * alignment, a scalar out of its dtype's range, an `out` that overlaps an input), nothing
 * written. */
PyObject *run_compiled(PyObject *known, PyObject *record, PyObject *b, PyObject *const *natives,
                       const unsigned long long *address, PyObject *scalar, long scalar_at,
                       PyObject *out_array) {
    if (!compiled_now() || !PyTuple_CheckExact(record) ||
        PyTuple_GET_SIZE(record) != RECORD_FIELDS)
        return NULL;
    PyObject **t = &PyTuple_GET_ITEM(record, 0);
    long arrays = PyLong_AsLong(t[0]);
    PyObject *off = t[13], *on = t[14], *offsets = t[15], *check = t[19];
    unsigned int dims[7];
    void *function;
    long long device = PyLong_AsLongLong(t[10]);
    if (arrays < 1 || arrays > 2 || (arrays == 2 && scalar != NULL) ||
        PyLong_AsLong(t[16]) != scalar_at || PyErr_Occurred() || !PyBytes_CheckExact(off) ||
        !PyBytes_CheckExact(on) || !PyBytes_CheckExact(offsets) ||
        PyBytes_GET_SIZE(off) != PyBytes_GET_SIZE(on) ||
        (out_array == NULL) != (check == Py_None)) {
        PyErr_Clear();
        return NULL;
    }
    int state = record_live(t[8], t[12], t[11], t[9], dims, &function);
    if (state < 0 || state == 2)
        return NULL;  /* an error; the Python way */
    if (out_array == NULL && outputs_own() <= 0)
        return NULL;  /* an error; another allocator's outputs */
    unsigned long long a1 = address[0], a2 = arrays == 2 ? address[1] : 0;
    if (a1 & as_bits(t[4]) || (arrays == 2 && a2 & as_bits(t[6])))
        return NULL;
    long long on_device;
    unsigned long long pointer;
    for (long i = 0; i < arrays; i++) {
        if (device_pointer(natives[i], &pointer, &on_device) < 0)
            return NULL;
        if (on_device != device)
            return NULL;
    }
    unsigned long long out_address = 0;
    PyObject *out = NULL;
    if (out_array != NULL) {  /* into out=: its device, alignment and overlap, as run checks */
        out = SLOT(out_array, off_a);
        if (out == NULL || !PyObject_TypeCheck(out, (PyTypeObject *)device_array))
            return NULL;
        if (device_pointer(out, &out_address, &on_device) < 0)
            return NULL;
        /* the inputs' pointers by operand index, as the check's k counts them */
        unsigned long long by_operand[2] = {a1, a2};
        if (scalar_at == 0) {
            by_operand[0] = 0;
            by_operand[1] = a1;
        }
        if (on_device != device || !out_clear(check, out_address, by_operand, 2, scalar_at))
            return NULL;
    }
    PyObject *seen = NULL;
    if (scalar != NULL) {  /* the parameters with the scalar's value in */
        seen = packed_seen(scalar_seen(t[17], t[18], scalar), t[13], &off, &on);
        if (seen == NULL)
            return NULL;  /* an error of its conversion, or a value for the Python way */
    }
    void *stream;
    if (cupy_stream(&stream) < 0) {
        Py_XDECREF(seen);
        return NULL;
    }
    if (out_array == NULL) {
        PyObject *shape_dtype[2] = {t[1], t[2]};
        out = PyObject_Vectorcall(device_array, shape_dtype, 2, NULL);
        if (out == NULL || device_pointer(out, &out_address, NULL) < 0) {
            Py_XDECREF(out);
            Py_XDECREF(seen);
            return NULL;
        }
    } else {
        Py_INCREF(out);
    }
    int misaligned = (a1 & as_bits(t[5])) || (arrays == 2 && (a2 & as_bits(t[7]))) ||
                     (out_address & as_bits(t[3]));
    /* (out, x1, x2, out), a missing operand's slot out again (a scalar first: (out, out, the
       array, out)), as the Python way packs them */
    uint64_t pointers[POINTER_SLOTS] = {out_address, a1, arrays == 2 ? a2 : out_address,
                                        out_address};
    if (scalar_at == 0) {
        pointers[1] = out_address;
        pointers[2] = a1;
    }
    int failed = state == 0 && launch_with_pointers(function, dims, misaligned ? off : on, offsets,
                                                    pointers, POINTER_SLOTS, 0, stream) < 0;
    Py_XDECREF(seen);
    PyObject *r = NULL;
    if (!failed) {
        if (out_array != NULL) {
            Py_INCREF(out_array);
            r = out_array;
        } else {
            r = output_array(known, out, b, out_address, 1);
        }
    }
    Py_DECREF(out);
    return r;
}

/* A fused call of Arrays (and scalars) on a GPU from its launch record (namespace/fusion.py
 * compiled_fused_record: (checks, shape, outputs, returns, generation, context, device,
 * function, dims, params off, params on, offsets, first pointer, scalar arguments,
 * out_check), checks = (k, unwrap, align_mask, vector_mask) per input, each operand k an
 * Array, outputs = ((dtype, 16-byte mask), ...)): the inputs on the record's device and
 * aligned, the outputs from CuPy or, into the Array `out_array` (the record's out_check not
 * None, one output), `out_array`'s on that device and clear of the inputs (out_clear), the
 * parameters those packed for the scalar arguments' values (scalars_seen) when the record
 * has a source for them, the outputs' and the inputs' pointers written in from parameter
 * `first pointer` on. Returns the output Array (settled), `returns` (tuple or list) of the
 * output Arrays (settled at their first use) or `out_array`; or NULL: with an error set, or
 * without one for the Python way (as run_compiled), nothing written. */
PyObject *run_fused_compiled(PyObject *prepared, PyObject *record, PyObject *operands,
                             PyObject *out_array) {
    if (!compiled_now() || !PyTuple_CheckExact(record) ||
        PyTuple_GET_SIZE(record) != FUSED_RECORD_FIELDS)
        return NULL;
    PyObject **t = &PyTuple_GET_ITEM(record, 0), *checks = t[0], *outputs = t[2],
             *returns = t[3], *out_check = t[14];
    unsigned int dims[7];
    void *function;
    long long device = PyLong_AsLongLong(t[6]);
    Py_ssize_t first = PyLong_AsSsize_t(t[12]), n_operands = PyTuple_GET_SIZE(operands);
    if (!PyTuple_CheckExact(checks) || !PyTuple_CheckExact(outputs) ||
        PyTuple_GET_SIZE(outputs) < 1 ||
        PyTuple_GET_SIZE(checks) + PyTuple_GET_SIZE(outputs) > PARAMS_COUNT ||
        n_operands > PARAMS_COUNT || PyErr_Occurred() || !PyBytes_CheckExact(t[9]) ||
        !PyBytes_CheckExact(t[10]) || !PyBytes_CheckExact(t[11]) ||
        PyBytes_GET_SIZE(t[9]) != PyBytes_GET_SIZE(t[10]) ||
        (returns != Py_None && returns != (PyObject *)&PyTuple_Type &&
         returns != (PyObject *)&PyList_Type) ||
        (returns == Py_None && PyTuple_GET_SIZE(outputs) != 1) ||
        (out_array == NULL) != (out_check == Py_None) ||
        (out_array != NULL && returns != Py_None)) {
        PyErr_Clear();
        return NULL;
    }
    int state = record_live(t[4], t[8], t[7], t[5], dims, &function);
    if (state < 0 || state == 2 || (out_array == NULL && outputs_own() <= 0))
        return NULL;  /* an error; the Python way; another allocator's outputs */
    Py_ssize_t n_inputs = PyTuple_GET_SIZE(checks), n_outputs = PyTuple_GET_SIZE(outputs);
    uint64_t pointers[PARAMS_COUNT];
    unsigned long long misaligned = 0, by_operand[PARAMS_COUNT] = {0};
    long long on_device;
    PyObject *b = NULL;
    for (Py_ssize_t i = 0; i < n_inputs; i++) {
        PyObject *check = PyTuple_GET_ITEM(checks, i), *x = checked_array(check, operands);
        if (x == NULL)
            return NULL;
        b = SLOT(x, off_b);
        unsigned long long address;
        if (device_pointer(SLOT(x, off_a), &address, &on_device) < 0)
            return NULL;
        if (on_device != device || address & as_bits(PyTuple_GET_ITEM(check, 2)))
            return NULL;  /* another device's; off its C++ type's alignment */
        misaligned |= address & as_bits(PyTuple_GET_ITEM(check, 3));
        pointers[n_outputs + i] = address;
        by_operand[PyLong_AsSsize_t(PyTuple_GET_ITEM(check, 0))] = address;  /* checked */
    }
    unsigned long long out_address = 0;
    if (out_array != NULL) {  /* into out=: its device, alignment and overlap, as run_into */
        PyObject *out = SLOT(out_array, off_a);
        if (out == NULL || !PyObject_TypeCheck(out, (PyTypeObject *)device_array) ||
            device_pointer(out, &out_address, &on_device) < 0)
            return NULL;
        if (on_device != device || !out_clear(out_check, out_address, by_operand, n_operands, -1))
            return NULL;
    }
    void *stream;
    if (b == NULL || cupy_stream(&stream) < 0)
        return NULL;
    PyObject *off = t[9], *on = t[10], *seen = NULL;
    if (t[13] != Py_None) {  /* the parameters with the scalar arguments' values in */
        seen = packed_seen(scalars_seen(t[13], operands), t[9], &off, &on);
        if (seen == NULL)
            return NULL;  /* an error of a conversion, or a value for the Python way */
    }
    PyObject *outs = PyTuple_New(n_outputs), *r = NULL;
    if (outs == NULL) {
        Py_XDECREF(seen);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n_outputs; i++) {
        PyObject *output = PyTuple_GET_ITEM(outputs, i), *out;  /* (dtype, 16-byte mask) */
        if (!PyTuple_CheckExact(output) || PyTuple_GET_SIZE(output) != 2)
            goto done;
        if (out_array != NULL) {
            out = SLOT(out_array, off_a);
            Py_INCREF(out);
        } else {
            PyObject *shape_dtype[2] = {t[1], PyTuple_GET_ITEM(output, 0)};
            out = PyObject_Vectorcall(device_array, shape_dtype, 2, NULL);
            if (out == NULL)
                goto done;
        }
        PyTuple_SET_ITEM(outs, i, out);
        if (out_array == NULL && device_pointer(out, &out_address, NULL) < 0)
            goto done;
        misaligned |= out_address & as_bits(PyTuple_GET_ITEM(output, 1));
        pointers[i] = out_address;
    }
    Py_INCREF(b);  /* held by the inputs, which the launch's Python may release */
    if (state == 1 || launch_with_pointers(function, dims, misaligned ? off : on, t[11],
                                           pointers, n_outputs + n_inputs, first, stream) == 0) {
        if (out_array != NULL) {
            Py_INCREF(out_array);
            r = out_array;
        } else {
            r = returned_outputs(prepared, outs, b, returns, out_address, 1);
        }
    }
    Py_DECREF(b);
done:
    Py_DECREF(outs);
    Py_XDECREF(seen);
    return r;
}

/* rearrange(y, x): rearrange_(y, x) of two Arrays of a GPU under the compiled launch, from
 * the copy's launch record in copy_records (keyed by the Arrays' layout ids and their
 * pointers mod 32, as strided.copy's short path keys it: cuda_compiled.copy_record's
 * (generation, context, device, function, dims, packed, offsets, dst_lo, dst_hi, src_lo,
 * src_hi)): True, launched, or None for the Python way (nothing written), which also
 * decides a copy whose byte ranges meet. The caller has evaluated pending expressions. */
static PyObject *rearrange(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "rearrange(y, x)");
        return NULL;
    }
    PyObject *y = args[0], *x = args[1];
    if (Array_type == NULL || copy_records == NULL || !compiled_now() ||
        Py_TYPE(y) != (PyTypeObject *)Array_type || Py_TYPE(x) != (PyTypeObject *)Array_type)
        Py_RETURN_NONE;
    PyObject *b = SLOT(y, off_b);
    if (b == NULL || SLOT(y, off_a) == NULL || SLOT(x, off_a) == NULL ||
        SLOT(y, off_p) != Py_None || SLOT(x, off_p) != Py_None || SLOT(x, off_b) == NULL ||
        !same_backend(b, SLOT(x, off_b)) || is_numpy(b))
        Py_RETURN_NONE;
    PyObject *ky = layout_key(y);
    if (ky == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    PyObject *kx = layout_key(x);
    if (kx == NULL) {
        Py_DECREF(ky);
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    }
    unsigned long long dy = as_bits(SLOT(y, off_d)), dx = as_bits(SLOT(x, off_d));
    PyObject *key = Py_BuildValue("(NNii)", ky, kx, (int)(dy & 31), (int)(dx & 31));
    if (key == NULL)
        return NULL;
    PyObject *record = PyDict_GetItemWithError(copy_records, key);  /* borrowed */
    Py_DECREF(key);
    if (record == NULL)
        return PyErr_Occurred() ? NULL : (Py_INCREF(Py_None), Py_None);
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) != COPY_RECORD_FIELDS)
        Py_RETURN_NONE;
    Py_INCREF(record);  /* the memo may drop it while Python runs below */
    PyObject **t = &PyTuple_GET_ITEM(record, 0), *r = NULL;
    unsigned int dims[7];
    void *function, *stream;
    long long device = PyLong_AsLongLong(t[2]), lo[2], hi[2], on_device;
    lo[0] = PyLong_AsLongLong(t[7]);
    hi[0] = PyLong_AsLongLong(t[8]);
    lo[1] = PyLong_AsLongLong(t[9]);
    hi[1] = PyLong_AsLongLong(t[10]);
    unsigned long long pointer;
    if (PyErr_Occurred() || !PyBytes_CheckExact(t[5]) || !PyBytes_CheckExact(t[6])) {
        PyErr_Clear();
        goto decline;
    }
    int state = record_live(t[0], t[4], t[3], t[1], dims, &function);
    if (state < 0)
        goto done;
    if (state == 2)
        goto decline;  /* the Python way */
    long long py = (long long)dy, px = (long long)dx;
    if (py + lo[0] < px + hi[1] && px + lo[1] < py + hi[0])
        goto decline;  /* overlapping (PreparedCopy.overlaps): the full call snapshots x */
    PyObject *natives[2] = {SLOT(y, off_a), SLOT(x, off_a)};
    for (int i = 0; i < 2; i++) {
        if (device_pointer(natives[i], &pointer, &on_device) < 0)
            goto done;
        if (on_device != device || pointer != (i == 0 ? dy : dx))
            goto decline;
    }
    if (cupy_stream(&stream) < 0)
        goto done;
    uint64_t pointers[2] = {dy, dx};
    if (state == 0 && launch_with_pointers(function, dims, t[5], t[6], pointers, 2, 0, stream) < 0)
        goto done;
    r = Py_True;
    Py_INCREF(r);
    goto done;
decline:
    r = Py_None;
    Py_INCREF(r);
done:
    Py_DECREF(record);
    return r;
}

/* set_driver(launch_address, context_address, mechanism, compiled, check_status, ndarray,
 * get_current_stream, copy_records): the compiled launch's entry points (the addresses of cuLaunchKernel
 * and cuCtxGetCurrent: libcuda's, or a stand-in's; 0 and 0 to clear them), the cuda
 * launcher's mechanism list and the name that selects this file, CuPy's check_status, its
 * ndarray type (the outputs), get_current_stream and the copies' launch records
 * (cuda_compiled.copy_records). Returns the new generation: records made before it are
 * stale. */
static PyObject *set_driver(PyObject *self, PyObject *args) {
    PyObject *launch_address, *context_address, *values[6];
    if (!PyArg_UnpackTuple(args, "set_driver", 8, 8, &launch_address, &context_address,
                           &values[0], &values[1], &values[2], &values[3], &values[4],
                           &values[5]))
        return NULL;
    void *launch = PyLong_AsVoidPtr(launch_address);
    void *context = launch == NULL && PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(context_address);
    if (PyErr_Occurred())
        return NULL;
    if ((launch == NULL) != (context == NULL) || !PyList_CheckExact(values[0]) ||
        !PyDict_Check(values[5])) {
        PyErr_SetString(PyExc_ValueError, "set_driver: both entry points or neither, the "
                                          "mechanism list and the copies' dict");
        return NULL;
    }
    if (intern_array_names() < 0 || intern_driver_names() < 0)
        return NULL;
    PyObject **targets[6] = {&mechanism, &compiled_name, &check_status, &device_array,
                             &current_stream, &copy_records};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*targets[i], values[i]);
    }
    /* void* to function pointer: what dlsym's callers do (POSIX guarantees it works) */
    memcpy(&driver_launch, &launch, sizeof launch);
    memcpy(&driver_context, &context, sizeof context);
    return PyLong_FromLong(++driver_generation);
}

/* launch_kernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem,
 * stream, params, extra): cuLaunchKernel through set_driver's address (the Python launches
 * of runtime/cuda_driver.py's records under the compiled mechanism), handles and `params`
 * (the address of a void*[]) and `extra` as ints; returns (status,), as cuda.bindings'
 * cuLaunchKernel does. */
static PyObject *launch_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "launch_kernel(function, grid_x, grid_y, grid_z, block_x, "
                                         "block_y, block_z, shared_mem, stream, params, extra)");
        return NULL;
    }
    if (driver_launch == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "launch_kernel: set_driver has not been called");
        return NULL;
    }
    unsigned int dims[7];
    for (int i = 0; i < 7; i++) {
        unsigned long v = PyLong_AsUnsignedLong(args[1 + i]);
        if (v == (unsigned long)-1 && PyErr_Occurred())
            return NULL;
        if (v > 0xFFFFFFFFUL) {
            PyErr_SetString(PyExc_OverflowError, "value too large to convert to unsigned int");
            return NULL;
        }
        dims[i] = (unsigned int)v;
    }
    void *function = PyLong_AsVoidPtr(args[0]);
    void *stream = PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(args[8]);
    void *params = PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(args[9]);
    void *extra = PyErr_Occurred() ? NULL : PyLong_AsVoidPtr(args[10]);
    if (PyErr_Occurred())
        return NULL;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = driver_launch(function, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
                           dims[6], stream, (void **)params, (void **)extra);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(i)", status);
}

/* forget_driver(): no entry points until set_driver (kernels unloaded: every launch record's
 * function handle is stale), the generation moved on. */
static PyObject *forget_driver(PyObject *self, PyObject *unused) {
    driver_launch = NULL;
    driver_context = NULL;
    ++driver_generation;
    Py_RETURN_NONE;
}

/* current_context(): the thread's current CUDA context (cuCtxGetCurrent through set_driver's
 * address) as an int, None when none is current. */
static PyObject *current_context(PyObject *self, PyObject *unused) {
    if (driver_context == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "current_context: set_driver has not been called");
        return NULL;
    }
    void *context = NULL;
    int status = driver_context(&context);
    if (status != 0) {
        PyObject *r = PyObject_CallFunction(check_status, "i", status);
        if (r != NULL) {
            Py_DECREF(r);
            PyErr_Format(PyExc_RuntimeError, "cuCtxGetCurrent returned %d", status);
        }
        return NULL;
    }
    if (context == NULL)
        Py_RETURN_NONE;
    return PyLong_FromVoidPtr(context);
}

static PyMethodDef compiled_launch_methods[] = {
    {"forget_driver", forget_driver, METH_NOARGS,
     "forget_driver(): no launches from C until set_driver"},
    {"current_context", current_context, METH_NOARGS,
     "current_context(): this thread's current CUDA context, or None"},
    {"set_driver", set_driver, METH_VARARGS,
     "set_driver(launch_address, context_address, mechanism, compiled, check_status, "
     "ndarray, get_current_stream, copy_records): the compiled launch's driver; returns its "
     "generation"},
    {"rearrange", (PyCFunction)(void (*)(void))rearrange, METH_FASTCALL,
     "rearrange(y, x): True when the copy was launched from its record, or None"},
    {"launch_kernel", (PyCFunction)(void (*)(void))launch_kernel, METH_FASTCALL,
     "launch_kernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, "
     "stream, params, extra): (status,)"},
    {NULL, NULL, 0, NULL},
};

/* The mechanism's functions and constants on the module (PyInit_hot_calls): 0, or -1 with an
 * error set. */
int add_compiled_launch(PyObject *m) {
    if (PyModule_AddFunctions(m, compiled_launch_methods) < 0 ||
        PyModule_AddIntConstant(m, "PARAMS_BYTES", PARAMS_BYTES) < 0 ||
        PyModule_AddIntConstant(m, "PARAMS_COUNT", PARAMS_COUNT) < 0 ||
        PyModule_AddIntConstant(m, "RECORD_FIELDS", RECORD_FIELDS) < 0 ||
        PyModule_AddIntConstant(m, "COPY_RECORD_FIELDS", COPY_RECORD_FIELDS) < 0 ||
        PyModule_AddIntConstant(m, "FUSED_RECORD_FIELDS", FUSED_RECORD_FIELDS) < 0 ||
        PyModule_AddIntConstant(m, "POINTER_SLOTS", POINTER_SLOTS) < 0)
        return -1;
    return 0;
}
