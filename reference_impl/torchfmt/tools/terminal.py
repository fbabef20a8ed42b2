"""Text a tool prints for people, made safe for a terminal (spec/inspect.md#inspect-text-escapes).

A file's keys, class names and strings reach the human-readable reports (``inspect``, the one line of
``convert`` and ``slim``): raw, an ESC or OSC sequence clears the screen or retitles the window, a CR or
newline forges report lines, a right-to-left override reorders what is shown, and a lone surrogate
cannot be written as UTF-8 at all.  :func:`safe` writes each such character as a Python escape
(``\\x1b``, ``\\u202e``, ``\\ud800``); everything else, non-ASCII letters included, is shown as itself.
``--json`` output is JSON's own escaping and is not touched.
"""

from __future__ import annotations

import re

#: C0 and C1 controls and DEL, line and paragraph separators, the bidi embeddings, overrides, isolates and
#: marks, every surrogate (only a lone one can be in a ``str``), the BOM, and the private-use characters
#: :class:`Styled` marks its styles with.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                    "\ufeff\ue000-\ue002\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe(text: str) -> str:
    """``text`` with every character of :data:`UNSAFE` written as its escape: one line, shown as it is."""
    return UNSAFE.sub(_escape, text)


#: Marks of a style inside a line being built (private-use characters, escaped in file data by
#: :func:`safe`): start, end of the style code, end of the styled text.
START, CODE_END, STOP = "\ue000", "\ue001", "\ue002"


def styled(text: str, code: str) -> str:
    """``text`` marked to be shown in the ANSI style ``code`` (``1`` bold, ``31`` red) by :func:`finish`."""
    return f"{START}{code}{CODE_END}{text}{STOP}"


_MARKED = re.compile(f"{START}([0-9;]+){CODE_END}(.*?){STOP}")


def finish(lines: list[str], color: bool) -> str:
    """The report's ``lines`` as terminal text: the styled pieces turned into ANSI SGR sequences (or
    plain text without ``color``) and every piece made :func:`safe`, so that data holding a newline stays
    on its line.  A mark forged by file data can at most colour its own text: only digits and ``;`` make
    a style code, and a stray mark is escaped."""
    out = []
    for line in lines:
        pieces, at = [], 0
        for m in _MARKED.finditer(line):
            pieces.append(safe(line[at:m.start()]))
            text = safe(m.group(2))
            pieces.append(f"\x1b[{m.group(1)}m{text}\x1b[0m" if color else text)
            at = m.end()
        pieces.append(safe(line[at:]))
        out.append("".join(pieces))
    return "\n".join(out) + "\n"
