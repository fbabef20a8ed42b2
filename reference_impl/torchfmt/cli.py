"""The ``torchfmt`` command (spec/canonical.md#canonical-reader-cli).

``torchfmt dump PATH`` prints the description and exits 0 (``torchfmt inspect PATH`` a report for people,
spec/inspect.md); a malformed, unsafe or ambiguous file gets one
stderr line ``<code>: <message>`` and exit status 1; an unsupported feature one line
``unsupported: <feature>`` and exit status 2, as do a path it cannot read and its own bugs: no other
exit status, ever.  ``PATH`` ``-`` reads standard input.  ``.t7`` hints come from options or from the
``TORCHFMT_T7_*`` environment variables the conformance suite sets.  ``torchfmt dump --batch`` answers
file after file in one process, one JSON line each (spec/canonical.md#canonical-reader-batch).
"""

from __future__ import annotations

import argparse
import errno
import functools
import io
import json
import os
import sys
import tempfile
import textwrap
from collections.abc import Callable
from typing import Any, TextIO

from . import describe
from .errors import ERROR_CODES, FormatError, Unsupported, quote
from .limits import WALK_FRAMES
from .recursion import recursion_limit
from .t7.encodings import Hints

EXIT_STATUS = """exit status:
  0  read: the output is the description
  1  malformed, unsafe or ambiguous: one stderr line '<code>: <message at byte offset>', <code> one of
{codes}
  2  not supported: one stderr line 'unsupported: <feature>' (also a path that cannot be read:
     missing-input, not-a-regular-file, unreadable-path; and
     every conversion convert or slim refuses: 'unsupported: <feature> (<why>)',
     spec/t7.md#t7-convert-refusals)
no other exit status, ever (spec/canonical.md#canonical-reader-cli)"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # a fifth of the command's start: on demand

    try:
        return version("torchfmt")
    except PackageNotFoundError:  # run from a source tree without an install
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``, as argparse's own action prints it, with the version looked up only when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"torchfmt {_version()}")
        parser.exit()


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The command line's parser, built once a process (four fifths of an in-process run's time)."""
    codes = textwrap.fill(", ".join(sorted(ERROR_CODES)), width=100, initial_indent="     ",
                          subsequent_indent="     ", break_on_hyphens=False)
    p = argparse.ArgumentParser(
        prog="torchfmt", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read Lua Torch .t7 and PyTorch .pt files without torch; nothing in a file is ever "
                    "executed.",
        epilog="commands:\n  dump      print the canonical description (JSON) of a .t7 or .pt file\n"
               "  inspect   a report for people: what the file is, its contents, whether\n"
               "            torch.load(weights_only=True) takes it, and where every byte goes\n"
               "            (--json: stable JSON; --plot FILE, --treemap FILE: charts; spec/inspect.md;\n"
               "            exit status 0 once the file was read, a whole pickled model read inert included\n"
               "            (--strict-status: dump's); 1 for a file that is no checkpoint, truncated or\n"
               "            malformed)\n"
               "  convert   write a .t7 or .pt file as pt-zip, pt-legacy, t7 or safetensors\n"
               "  slim      rewrite a .t7 or .pt file keeping only what matters (trimmed storages)\n\n"
               + EXIT_STATUS.format(codes=codes))
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    dump = sub.add_parser("dump", help="print the canonical description of a .t7 or .pt file",
                          formatter_class=argparse.RawDescriptionHelpFormatter,
                          description="Print the canonical description (spec/canonical.md) of a .t7 or "
                                      ".pt file as one JSON document.",
                          epilog=EXIT_STATUS.format(codes=codes))
    dump.add_argument("path", nargs="?", help="the file; - reads standard input")
    dump.add_argument("--batch", action="store_true",
                      help="no path: read one JSON request per line on stdin ({\"id\", \"path\", \"hints\"}) "
                           "and answer each on one line (spec/canonical.md#canonical-reader-batch)")
    dump.add_argument("--mode", choices=["binary", "ascii"], help=".t7 hint: encoding mode")
    dump.add_argument("--long-size", type=int, choices=[4, 8], help=".t7 hint: bytes per long")
    dump.add_argument("--byte-order", choices=["little", "big"], help=".t7 hint: byte order")
    dump.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    dump.add_argument("--inert", action="store_true",
                      help="keep pickle globals outside the allowlist as opaque objects (never called)")
    insp = sub.add_parser("inspect", help="what a file is, its contents, weights_only readiness and where "
                                          "its bytes go (spec/inspect.md)")
    insp.add_argument("path")
    insp.add_argument("--json", action="store_true",
                      help="print the report as JSON (spec/inspect.md#inspect-json)")
    insp.add_argument("--depth", type=int, default=3, help="levels of the contents tree to show (default 3)")
    insp.add_argument("--plot", metavar="FILE",
                      help="also draw where the bytes go as a bar chart (.svg, .png, .pdf; needs the extra "
                           "plot)")
    insp.add_argument("--treemap", metavar="FILE",
                      help="also draw where the bytes go as a treemap, by role and field and by top-level "
                           "key (.svg, .png, .pdf; needs the extra plot: matplotlib and squarify)")
    insp.add_argument("--strict-status", action="store_true",
                      help="exit with dump's status: non-zero also for a file only the inert reading reads "
                           "(a whole pickled model, which torch.load(weights_only=True) refuses)")
    _t7_hints(insp)
    conv = sub.add_parser("convert", help="write a .t7 or .pt file as pt-zip, pt-legacy, t7 or safetensors")
    conv.add_argument("input")
    conv.add_argument("output")
    conv.add_argument("--to", choices=["pt-zip", "pt-legacy", "t7", "safetensors"],
                      help="the output format (default: from the output's extension, else pt-zip)")
    conv.add_argument("--force", action="store_true", help="replace an existing output")
    conv.add_argument("--json", action="store_true", help="report as one JSON line")
    conv.add_argument("--keep-buffers", action="store_true",
                      help="keep an nn model's training buffers (gradWeight, output, ...)")
    conv.add_argument("--metadata", action="store_true",
                      help="safetensors: keep non-tensor values as JSON in __metadata__ instead of refusing")
    conv.add_argument("--inert", action="store_true",
                      help="read a whole pickled model (torch.save(model)) without running it and write its "
                           "state_dict")
    conv.add_argument("--keep-devices", action="store_true",
                      help="keep the device tags of the input (cuda:0, ...); by default every tensor is "
                           "written as a CPU tensor, which torch loads without map_location")
    _t7_hints(conv)
    sl = sub.add_parser("slim", help="rewrite a .t7 or .pt file keeping only what matters",
                        description="Rewrite IN as OUT in IN's variant (a 0.1.x tar .pt as pt-zip): each "
                                    "storage trimmed to what its tensors use (views kept), identical "
                                    "storages saved once, and what the level and --drop name left out "
                                    "(spec/slim.md#slim-cli).")
    sl.add_argument("input")
    sl.add_argument("output")
    sl.add_argument("--level", choices=["light", "medium", "heavy"], default="heavy",
                    help="dpnn nn.Serial's levels over the roles of spec/inspect.md#inspect-roles (light: "
                         "weights, biases, running statistics; medium: also optimizer state and gradients; "
                         "heavy: everything, the default). `torchfmt inspect` shows what each level saves")
    sl.add_argument("--drop", nargs="+", default=[], metavar="KEY",
                    help=".pt: a key (dotted path) or a group: optimizer, grads, ema. .t7: a module field "
                         "to empty")
    sl.add_argument("--dry-run", action="store_true", help="report without writing")
    sl.add_argument("--tie-equal", action="store_true",
                    help="make storages with equal bytes one storage (they then share: a write to one "
                         "changes the other; without it they stay apart, as torch loads them)")
    sl.add_argument("--keep-copies", action="store_true",
                    help="the default since --tie-equal (storages with equal bytes stay apart); kept for "
                         "scripts")
    sl.add_argument("--force", action="store_true", help="replace an existing output")
    sl.add_argument("--json", action="store_true", help="report as one JSON line")
    _t7_hints(sl)
    return p


def _t7_hints(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=["binary", "ascii"], help=".t7 hint: encoding mode")
    p.add_argument("--long-size", type=int, choices=[4, 8], help=".t7 hint: bytes per long")
    p.add_argument("--byte-order", choices=["little", "big"], help=".t7 hint: byte order")


def _hints(args: argparse.Namespace) -> Hints:
    """The ``.t7`` hints of the environment, overridden by the command's options; an invalid variable
    raises :class:`Unsupported` ``t7-hint`` (spec/t7.md#t7-hints)."""
    return Hints.from_env().override(mode=args.mode, long_size=args.long_size, byte_order=args.byte_order)


def _slim(args: argparse.Namespace) -> int:
    """``torchfmt slim``: one stdout line (or JSON); failures as :func:`_convert`'s."""
    from .tools.slim import slim

    return _report(lambda: slim(args.input, args.output, args.level, args.drop, dry_run=args.dry_run,
                                force=args.force, tie_equal=args.tie_equal, hints=_hints(args)), args.json,
                   args.input)


def _convert(args: argparse.Namespace) -> int:
    """``torchfmt convert``: one stdout line (or JSON) on success; one stderr line and exit 1 (an input
    the reader rejects) or 2 (a refused conversion, an unsupported feature) otherwise."""
    from .tools.convert import convert

    return _report(lambda: convert(args.input, args.output, args.to, force=args.force,
                                   keep_buffers=args.keep_buffers, metadata=args.metadata,
                                   inert=args.inert, keep_devices=args.keep_devices,
                                   hints=_hints(args)), args.json, args.input)


def _report(run: Callable[[], Any], as_json: bool, path: str) -> int:
    """Run a command that writes a file and returns a report; print it, or one stderr line on failure
    (:func:`failure`): exit status 1 with ``<code>: <message> (at byte N)`` for an input the reader
    rejects, 2 with ``unsupported: <feature> (<why>)`` for what it declines and for every refused
    conversion (:class:`~torchfmt.tools.convert.ConvertError`, spec/t7.md#t7-convert-refusals)."""
    from .tools.reading import TOOL_RECURSION
    from .tools.terminal import safe

    try:
        with recursion_limit(TOOL_RECURSION):
            report = run()
    except Exception as e:
        status, line = failure(e, path, "a torchfmt bug")
        print(safe(line), file=sys.stderr)
        return status
    print(json.dumps(report.json()) if as_json else safe(report.line()))
    return 0


def failure(e: BaseException, path: str, bug: str = "a reader bug") -> tuple[int, str]:
    """The exit status and the one stderr line of a command that failed with ``e`` (``dump``'s, which
    every tool shares: spec/canonical.md#canonical-reader-cli): 1 for an input the reader rejects
    (``limit-exceeded`` too when Python's own memory or recursion ran out before a limit of ours), 2 for
    what it declines, a path it cannot read, a value a writer has no form for, and its own bugs."""
    pickler = sys.modules.get("torchfmt.writer.pickler")  # a writer's refusal: only once it was imported
    if isinstance(e, FormatError):
        return 1, e.line()
    if isinstance(e, Unsupported):
        return 2, " ".join(e.line().split())
    if pickler is not None and isinstance(e, pickler.PicklingError):  # a value the format has no form for
        return 2, f"unsupported: unwritable-value ({quote(str(e), 200)})"
    if isinstance(e, (MemoryError, RecursionError)):  # the limits should have caught it first: still 1
        return 1, (f"limit-exceeded: Python {type(e).__name__} while reading (the reader's own limits did "
                   "not stop it first: a reader bug)")
    if isinstance(e, OSError):  # not the bytes: an unreadable path (spec/canonical.md#canonical-reader-cli)
        if e.errno == errno.ENOMEM:
            return 1, f"limit-exceeded: {e.strerror}: the file could not be mapped"
        what = e.filename if isinstance(e.filename, str) else path
        return 2, f"unsupported: unreadable-path ({quote(e.strerror or type(e).__name__)}: {quote(what)})"
    what = quote(e.args[0]) if e.args else ""  # never str(e): its repr of a file's value may recurse
    return 2, f"unsupported: internal-error ({type(e).__name__}: {what}; {bug})"


def _stdin_copy() -> tempfile._TemporaryFileWrapper:  # type: ignore[type-arg]
    """Standard input copied into a temporary file, so that it is read like any path (mapped, windowed)."""
    tmp = tempfile.NamedTemporaryFile(prefix="torchfmt-stdin-")  # noqa: SIM115 - closed by the caller
    while chunk := sys.stdin.buffer.read(1 << 20):
        tmp.write(chunk)
    tmp.flush()
    return tmp


#: Top-level objects encoded by one call (a .t7 stream may hold a quarter million).
_BATCH = 1_000


def _write(desc: dict[str, object], out: TextIO, indent: int | None) -> None:
    """The description as one JSON line.  ``json.dump`` encodes in pure Python (only the one-shot
    ``json.dumps`` uses the C encoder, 3-5 times faster on a million values) and ``json.dumps`` of the
    whole would hold a second copy of it: each top-level object is encoded on its own instead."""
    if indent is not None:
        json.dump(desc, out, indent=indent)
    else:
        out.write("{")
        for n, (key, value) in enumerate(desc.items()):
            out.write((", " if n else "") + json.dumps(key) + ": ")
            if key == "objects" and isinstance(value, list):
                out.write("[")
                for k in range(0, len(value), _BATCH):
                    out.write((", " if k else "") + json.dumps(value[k:k + _BATCH])[1:-1])
                out.write("]")
            else:
                out.write(json.dumps(value))
        out.write("}")
    out.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "convert":
        return _convert(args)
    if args.command == "slim":
        return _slim(args)
    if args.command == "dump" and (args.batch == (args.path is not None)):
        parser.error("dump takes a PATH, or --batch and none")
    if args.command == "dump" and args.batch:
        return _batch(args.inert)
    try:
        hints = _hints(args)
    except Unsupported as e:  # an invalid TORCHFMT_T7_* value, whatever the file (spec/t7.md#t7-hints)
        print(e.line(), file=sys.stderr)
        return 2
    if args.command == "inspect":
        return _inspect(args, hints)
    status, desc = _describe(args.path, hints, args.inert, sys.stderr)
    if desc is None:
        return status
    # A description nests about three JSON containers per level of the file's nesting (bounded by
    # the readers' depth limits); the encoder recurses once per container.
    try:
        with recursion_limit(WALK_FRAMES):
            _write(desc, sys.stdout, args.indent)
            sys.stdout.flush()
    except BrokenPipeError:  # the reader of our output (``| head``) stopped early: not our error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _describe(path: str, hints: Hints, inert: bool, err: TextIO) -> tuple[int, dict[str, object] | None]:
    """``dump``'s reading: (0, the description), or (1 or 2, None) with its one line written on ``err``."""
    stdin = None
    try:
        if path == "-":
            stdin = _stdin_copy()
        return 0, describe(stdin.name if stdin else path, hints, inert=inert)
    except Exception as e:  # every failure as dump's one line (:func:`failure`)
        status, line = failure(e, path)
        print(line, file=err)
        return status, None
    finally:
        if stdin is not None:
            stdin.close()


def _batch(inert: bool) -> int:
    """``dump --batch`` (spec/canonical.md#canonical-reader-batch): per request line ``{"id", "path",
    "hints"}`` the answer line ``{"id", "status", "description"}`` or ``{"id", "status", "error"}``, what
    ``dump PATH`` would print and exit with, the request's hints as its ``TORCHFMT_T7_*`` variables.
    File descriptor 1 is pointed at stderr, so that only answers reach the suite."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        head = json.dumps({"id": request["id"]})[:-1]
        err = io.StringIO()
        try:
            hints = Hints.from_env(request.get("hints") or {})
        except Unsupported as e:  # an invalid hint, whatever the file (spec/t7.md#t7-hints)
            status, desc = 2, None
            err.write(e.line() + "\n")
        else:
            status, desc = _describe(request["path"], hints, inert, err)
        if desc is None:
            answers.write(f'{head}, "status": {status}, "error": {json.dumps(err.getvalue().strip())}}}\n')
        else:
            out = io.StringIO()
            with recursion_limit(WALK_FRAMES):
                _write(desc, out, None)
            answers.write(f'{head}, "status": 0, "description": {out.getvalue().rstrip()}}}\n')
        answers.flush()
    return 0


def _inspect(args: argparse.Namespace, hints: Hints) -> int:
    """``torchfmt inspect`` (spec/inspect.md#inspect-cli): the report on stdout whatever the outcome, exit
    0 when the file was read (``--strict-status``: ``dump``'s status), and the one error line on stderr
    when the status is not 0 (then not repeated in the report).  A chart's extra is checked before the
    file is read: a missing one fails before anything is printed."""
    from .tools.inspect import inspect, render
    from .tools.reading import TOOL_RECURSION
    from .tools.terminal import safe

    charts = [(kind, target) for kind, target in (("plot", args.plot), ("treemap", args.treemap)) if target]
    if charts:
        missing = _missing_plot_extra([kind for kind, _ in charts])
        if missing:
            print(missing, file=sys.stderr)
            return 2
    try:
        with recursion_limit(TOOL_RECURSION):
            report, status = inspect(args.path, hints, max(args.depth, 0), strict_status=args.strict_status)
    except Exception as e:  # an unreadable path; a bug of ours: one line all the same
        status, line = failure(e, args.path, "a torchfmt bug")
        print(safe(line), file=sys.stderr)
        return status
    try:
        with recursion_limit(TOOL_RECURSION):  # the report is as deep as what was read (1,000 levels)
            if args.json:
                json.dump(report, sys.stdout, indent=1)
                sys.stdout.write("\n")
            else:
                color = (sys.stdout.isatty() and "NO_COLOR" not in os.environ
                         and os.environ.get("TERM") != "dumb")
                sys.stdout.write(render(report, color, error_line=not status))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    for kind, target in charts:
        if report["bytes"] is not None:
            try:
                from .tools import plot

                getattr(plot, kind)(report, target)
            except (OSError, ValueError) as e:
                print(f"unsupported: unwritable-{kind} ({quote(str(e))})", file=sys.stderr)
                return 2
    if status:
        e = report["error"]
        where = "" if e["offset"] is None else f" (at byte {e['offset']})"
        print(safe(f"{e['code']}: {e['message']}{where}"), file=sys.stderr)
    return status


def _missing_plot_extra(kinds: list[str]) -> str | None:
    """The one refusal line when a chart asked for needs a module that is not installed (matplotlib;
    squarify for a treemap), None when all are there."""
    import importlib.util

    needed = ["matplotlib"] + (["squarify"] if "treemap" in kinds else [])
    absent = [m for m in needed if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    return (f"unsupported: {kinds[0]} (needs {' and '.join(absent)}, not installed: "
            "pip install 'torchfmt[plot]')")


if __name__ == "__main__":
    sys.exit(main())
