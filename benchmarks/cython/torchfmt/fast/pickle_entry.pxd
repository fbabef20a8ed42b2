# Augmenting declarations for reference_impl/torchfmt/fast/pickle_entry.py, used only by
# benchmarks/compiled_speed.py's "typed" build (issue 12): the .py stays as it is.  The opcode constants
# become C ints and the sequence reader's helpers C functions over C offsets; sizes, strides, storage
# offsets and numels stay Python ints, so that no value from a file meets a C range.
cimport cython

cdef int _BINGET, _LONG_BINGET, _BINPUT, _LONG_BINPUT, _BININT1, _BININT2, _BININT
cdef int _MARK, _TUPLE, _EMPTY_TUPLE, _TUPLE1, _TUPLE2, _TUPLE3, _NEWTRUE, _NEWFALSE
cdef int _BINUNICODE, _BINPERSID, _REDUCE
cdef Py_ssize_t _ARGS

cdef bint _is(object v, tuple name)

@cython.locals(code=int, key=Py_ssize_t)
cdef tuple _get(object buf, Py_ssize_t p, dict memo, list got)

@cython.locals(code=int)
cdef Py_ssize_t _put(object buf, Py_ssize_t p, list puts) except -1

@cython.locals(code=int)
cdef (Py_ssize_t, Py_ssize_t) _int(object buf, Py_ssize_t p) except *

@cython.locals(n=Py_ssize_t)
cdef tuple _str(object m, Py_ssize_t p, list got, list puts)

@cython.locals(code=int, marked=bint, q=Py_ssize_t, v=Py_ssize_t, items=list)
cdef tuple _ints(object buf, Py_ssize_t p, list puts)

@cython.locals(p=Py_ssize_t, after=Py_ssize_t, keyed=bint, key_fresh=bint, location_fresh=bint,
               persid_at=Py_ssize_t, size_ops=Py_ssize_t, stride_ops=Py_ssize_t, code=int,
               hooks_at=Py_ssize_t, reduce_at=Py_ssize_t, last_put=Py_ssize_t, ops=Py_ssize_t,
               got=list, puts=list, memo=dict)
cdef tuple _read(object m, Py_ssize_t pos)
