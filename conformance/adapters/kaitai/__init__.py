"""The Kaitai-based second reader (issue 4): the generated parsers of ksy/ for every byte layout, and the
least glue for what a grammar cannot say (the pickle stack machine, the allowlisted rebuild functions,
the .t7 reference index, hashing, sharing).  It never imports torchfmt: it cross-checks the reference
reader.  Entry point: conformance/adapters/kaitai_reader.py.
"""
