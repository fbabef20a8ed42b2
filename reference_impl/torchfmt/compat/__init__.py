"""Drop-in replacements for other readers' APIs, over torchfmt's reader (nothing from a file is run).

- :mod:`torchfmt.compat.torchfile`: ``torchfile.load`` (the PyPI ``torchfile`` package, unmaintained),
  with its types and options, and the ``.t7`` files it cannot read (ascii, 4-byte longs, big-endian,
  Half).
"""
