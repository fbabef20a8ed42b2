# Augmenting declarations for reference_impl/torchfmt/pt/ziparchive.py, used only by
# benchmarks/compiled_speed.py's "typed" build (issue 12): the .py stays as it is.  Only 16-bit header
# fields become C ints; sizes and offsets, which zip64 makes 64-bit unsigned, stay Python ints.
cimport cython

@cython.locals(nlen=Py_ssize_t, xlen=Py_ssize_t, lflags=Py_ssize_t, lmethod=Py_ssize_t)
cpdef _local(_HeaderReader buf, str name, bytes raw, header, size, csize, Py_ssize_t method, Py_ssize_t flags,
             cd_offset)

cdef class _HeaderReader:
    cdef public object buf
    cdef public Py_ssize_t size
    cdef public Py_ssize_t start
    cdef public bytes window
