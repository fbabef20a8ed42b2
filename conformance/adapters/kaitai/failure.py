"""How this reader ends when it does not accept a file (spec/canonical.md#canonical-reader-cli):
:class:`Reject` (exit 1, a code of the closed set), :class:`Decline` (exit 2), and the mapping of the
Kaitai runtime's exceptions to the closest code (spec/canonical.md#canonical-error-codes).
"""

from __future__ import annotations

import kaitaistruct

from .facts import error_codes


class Reject(Exception):
    """A malformed, unsafe or ambiguous file."""

    def __init__(self, code: str, message: str) -> None:
        if code not in error_codes():
            raise ValueError(f"{code!r} is not in the closed set of error codes")
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


class Decline(Exception):
    """A feature this reader does not support."""

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(f"unsupported: {feature}")


#: The grammar field a failed validation names (the tail of the Kaitai ``src_path``, or the whole of
#: it) -> the code; the first match wins.  Anything not listed is ``bad-value``.
_VALIDATION_CODES: tuple[tuple[str, str], ...] = (
    # torch_t7.ksy / torch_t7_ascii.ksy
    ("/types/t7_object/seq/0", "bad-type-code"),  # type_code (binary) / type_code_token (ascii)
    ("/types/indexed/seq/0", "bad-reference"),  # the reference index
    ("/types/lua_string/seq/0", "bad-length"),
    ("/types/ascii_string/seq/0", "bad-length"),
    ("/types/table_body/seq/0", "bad-length"),
    ("/types/function_body/seq/0", "bad-length"),
    ("/types/tensor/seq/0", "bad-length"),
    ("/types/storage/seq/0", "bad-length"),
    ("/types/tds_hash/seq/0", "bad-length"),
    ("/types/tds_vec/seq/0", "bad-length"),
    # python_pickle.ksy
    ("/types/op/seq/0", "bad-opcode"),
    ("/types/bytes_s4/seq/0", "bad-length"),
    # pytorch_legacy.ksy: the magic number pickle
    ("pytorch_legacy:/seq/0", "bad-magic"),
    # pytorch_zip.ksy: the end records, central directory and local headers
    ("pytorch_zip:", "bad-container"),
    # pytorch_tar.ksy
    ("pytorch_tar:/types/tensor_record/seq/1", "bad-length"),
    ("pytorch_tar:/types/storage_record/seq/1", "bad-length"),
    ("pytorch_tar:", "bad-container"),
)


def from_kaitai(e: BaseException, grammar: str, what: str) -> Reject:
    """The closest code for an exception the generated parser ``grammar`` raised while reading ``what``."""
    if isinstance(e, kaitaistruct.ValidationFailedError):
        path = e.src_path or ""
        for suffix, code in _VALIDATION_CODES:
            g, _, tail = suffix.rpartition(":")
            if (not g or g == grammar) and (path.endswith(tail) if tail else True):
                return Reject(code, f"{what}: {e}")
        return Reject("bad-value", f"{what}: {e}")
    if isinstance(e, (EOFError, kaitaistruct.EndOfStreamError)):
        return Reject("truncated", f"{what}: {e}")
    if isinstance(e, kaitaistruct.InvalidArgumentError):  # a negative size
        return Reject("bad-length", f"{what}: {e}")
    if isinstance(e, UnicodeDecodeError):
        return Reject("bad-value", f"{what}: text that is not {e.encoding}: {e.reason}")
    if isinstance(e, ValueError):  # .to_i of a token that is not a number, an int too large for a field
        return Reject("bad-value", f"{what}: {e}")
    if isinstance(e, OverflowError):
        return Reject("bad-length", f"{what}: {e}")
    raise e


def half_read(e: BaseException | None, type_name: str) -> object | None:
    """The innermost object of the generated type ``type_name`` that was being read when ``e`` (or the
    exception it was raised from) was raised: the generated parsers keep no partial result, but a
    reader may need a field the grammar had already read (a length, a count) to report the first problem
    in reading order."""
    while e is not None:
        found, tb = None, e.__traceback__
        while tb is not None:
            obj = tb.tb_frame.f_locals.get("self")
            if type(obj).__name__ == type_name:
                found = obj
            tb = tb.tb_next
        if found is not None:
            return found
        e = e.__cause__ or e.__context__
    return None
