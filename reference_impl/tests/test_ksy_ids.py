"""Every id of every grammar in ksy/ is usable by every target kaitai-struct-compiler 0.11 supports.

The compiler escapes no keyword: it spells an id by a fixed rule per target and per kind of id (a type
becomes a class, a field an attribute or accessor, a param a function argument, an enum value a
constant) and emits it as it is.  An id that comes out as a keyword of the target, or as a class the
generated code itself uses unqualified (JavaScript's `Object`, Java's `Long`), makes a parser that does
not compile or load: the `.t7` grammars' `object`, `long` and `boolean` did exactly that (issue 28).

`bash ksy/build.sh --check` compiles to javascript, java, go, python and cpp_stl; this test covers the
other targets too, which no tool here compiles (csharp, rust, php, ruby, perl, lua, nim).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
GRAMMARS = sorted((ROOT / "ksy").glob("*.ksy"))


def snake(s: str) -> str:
    return s


def lower_camel(s: str) -> str:
    head, *rest = s.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def upper_camel(s: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in s.split("_"))


def upper(s: str) -> str:
    return s.upper()


# Keywords (and literals the languages reserve), per target.
KEYWORDS: dict[str, set[str]] = {
    "javascript": set("""break case catch class const continue debugger default delete do else enum export
        extends false finally for function if implements import in instanceof interface let new null package
        private protected public return static super switch this throw true try typeof var void while with
        yield await arguments eval undefined NaN Infinity""".split()),
    "java": set("""abstract assert boolean break byte case catch char class const continue default do double
        else enum extends false final finally float for goto if implements import instanceof int interface
        long native new null package private protected public return short static strictfp super switch
        synchronized this throw throws transient true try void volatile while _""".split()),
    "go": set("""break case chan const continue default defer else fallthrough for func go goto if import
        interface map package range return select struct switch type var nil true false iota""".split()),
    "python": set("""False None True and as assert async await break class continue def del elif else
        except finally for from global if import in is lambda nonlocal not or pass raise return try while
        with yield""".split()),
    "cpp_stl": set("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
        char16_t char32_t class compl concept const consteval constexpr constinit const_cast continue
        co_await co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
        extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
        nullptr operator or or_eq private protected public register reinterpret_cast requires return short
        signed sizeof static static_assert static_cast struct switch template this thread_local throw true
        try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
        NULL""".split()),
    "csharp": set("""abstract as base bool break byte case catch char checked class const continue decimal
        default delegate do double else enum event explicit extern false finally fixed float for foreach goto
        if implicit in int interface internal is lock long namespace new null object operator out override
        params private protected public readonly ref return sbyte sealed short sizeof stackalloc static
        string struct switch this throw true try typeof uint ulong unchecked unsafe ushort using virtual void
        volatile while""".split()),
    "rust": set("""as async await break const continue crate dyn else enum extern false fn for if impl in
        let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use
        where while abstract become box do final macro override priv try typeof unsized virtual yield
        union""".split()),
    "php": set("""abstract and array as break callable case catch class clone const continue declare default
        do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile enum eval exit extends
        final finally fn for foreach function global goto if implements include include_once instanceof
        insteadof interface isset list match namespace new or print private protected public readonly
        require require_once return static switch throw trait try unset use var while xor yield""".split()),
    "ruby": set("""BEGIN END alias and begin break case class def defined? do else elsif end ensure false for
        if in module next nil not or redo rescue retry return self super then true undef unless until when
        while yield __FILE__ __LINE__ __ENCODING__""".split()),
    "perl": set("""if elsif else unless while until for foreach do sub my our local return last next redo
        package use no require eval and or not xor lt gt le ge eq ne cmp q qq qw qr qx m s tr y
        __END__ __DATA__ __FILE__ __LINE__ __PACKAGE__ BEGIN END""".split()),
    "lua": set("""and break do else elseif end false for function goto if in local nil not or repeat return
        then true until while""".split()),
    "nim": set("""addr and as asm bind block break case cast concept const continue converter defer discard
        distinct div do elif else end enum except export finally for from func if import in include
        interface is isnot iterator let macro method mixin mod nil not notin object of or out proc ptr raise
        ref return shl shr static template try tuple type using var when while xor yield""".split()),
}

# Names the generated code uses unqualified, which a generated class of the same spelling hides (and, for
# Java, the restricted identifiers no class may be named).
BUILTIN_TYPES: dict[str, set[str]] = {
    "javascript": set("""Object Array Error TypeError RangeError Math String Number Boolean Symbol BigInt JSON
        Uint8Array Int8Array DataView ArrayBuffer Map Set Promise Date RegExp Function KaitaiStream
        TextDecoder Buffer""".split()),
    "java": set("""Object Long Integer Short Byte Character Boolean Float Double Number String Math Class
        System Exception Error RuntimeException Iterable Enum Void Thread ArrayList Arrays List Map HashMap
        IOException Charset StandardCharsets KaitaiStream KaitaiStruct
        var yield record sealed permits""".split()),
    "csharp": set("""Object String Math Array List Dictionary Exception Convert BitConverter Int32 Int64
        UInt32 UInt64 Byte Boolean Double Single Encoding KaitaiStream KaitaiStruct""".split()),
    "php": {w.capitalize() for w in "object string int float bool null true false void iterable mixed never "
            "array callable self parent static".split()} | {"KaitaiStream", "KaitaiStruct"},
    "ruby": set("""Object String Integer Float Array Hash Struct Kernel Comparable Enumerable Exception
        IO File Class Module Symbol Kaitai""".split()),
    "python": {"KaitaiStruct", "KaitaiStream", "BytesIO", "IntEnum", "None", "True", "False"},
}

Spell = Callable[[str], str]
# How kaitai-struct-compiler 0.11 spells each kind of id per target (read from its output); None where
# the name is prefixed with its owner's (Go, Rust and Nim types, Go/C++/Perl/Ruby enum values) or quoted
# (Nim fields), so no id can collide.
SPELLING: dict[str, dict[str, Spell | None]] = {
    "javascript": {"type": upper_camel, "field": lower_camel, "param": lower_camel, "enum": upper_camel,
                   "enum_value": upper},
    "java": {"type": upper_camel, "field": lower_camel, "param": lower_camel, "enum": upper_camel,
             "enum_value": upper},
    "go": {"type": None, "field": upper_camel, "param": lower_camel, "enum": None, "enum_value": None},
    "python": {"type": upper_camel, "field": snake, "param": snake, "enum": upper_camel,
               "enum_value": snake},
    "cpp_stl": {"type": lambda s: s + "_t", "field": snake, "param": snake, "enum": lambda s: s + "_t",
                "enum_value": None},
    "csharp": {"type": upper_camel, "field": upper_camel, "param": lower_camel, "enum": upper_camel,
               "enum_value": upper_camel},
    "rust": {"type": None, "field": snake, "param": snake, "enum": None, "enum_value": upper_camel},
    "php": {"type": upper_camel, "field": lower_camel, "param": lower_camel, "enum": upper_camel,
            "enum_value": upper},
    "ruby": {"type": upper_camel, "field": snake, "param": snake, "enum": upper, "enum_value": None},
    "perl": {"type": upper_camel, "field": snake, "param": snake, "enum": None, "enum_value": None},
    "lua": {"type": upper_camel, "field": snake, "param": snake, "enum": upper_camel, "enum_value": snake},
    "nim": {"type": None, "field": None, "param": lower_camel, "enum": None, "enum_value": snake},
}
# Where a target allows keywords as names of one kind: PHP (since 7.0) in method names and class
# constants, except `class`.
KIND_KEYWORDS: dict[tuple[str, str], set[str]] = {("php", "field"): set(), ("php", "enum_value"): {"class"}}
# Targets whose names are case-insensitive (PHP class names) or style-insensitive past the first letter (Nim).
FOLDED = {"php": str.lower, "nim": lambda s: s[:1] + s[1:].replace("_", "").lower()}


def _ids(ksy: dict[str, Any], where: str) -> Iterator[tuple[str, str, str]]:
    """(kind, id, where) for every id a grammar (or a type of it) declares."""
    for section in ("seq", "instances"):
        body = ksy.get(section) or []
        names = [a["id"] for a in body] if section == "seq" else list(body)
        for name in names:
            yield "field", name, f"{where}/{section}/{name}"
    for p in ksy.get("params") or []:
        yield "param", p["id"], f"{where}/params/{p['id']}"
    for name, values in (ksy.get("enums") or {}).items():
        yield "enum", name, f"{where}/enums/{name}"
        for v in values.values():
            vid = v["id"] if isinstance(v, dict) else v
            yield "enum_value", str(vid), f"{where}/enums/{name}/{vid}"
    for name, body in (ksy.get("types") or {}).items():
        yield "type", name, f"{where}/types/{name}"
        yield from _ids(body, f"{where}/types/{name}")


def _all_ids() -> list[tuple[str, str, str]]:
    out = []
    for path in GRAMMARS:
        ksy = yaml.safe_load(path.read_text())
        out.append(("type", ksy["meta"]["id"], f"{path.stem}/meta/id"))
        out.extend(_ids(ksy, path.stem))
    return out


def _clashes(kind: str, name: str) -> list[str]:
    found = []
    for target, spelling in SPELLING.items():
        spell = spelling[kind]
        if spell is None:
            continue
        spelled = spell(name)
        fold = FOLDED.get(target, lambda s: s)
        reserved = set(KIND_KEYWORDS.get((target, kind), KEYWORDS[target]))
        if kind in ("type", "enum"):
            reserved |= BUILTIN_TYPES.get(target, set())
        if fold(spelled) in {fold(w) for w in reserved}:
            found.append(f"{target} {spelled}")
    return found


def test_the_tables_cover_every_target() -> None:
    """Every language the pinned compiler generates parsers for has a keyword list and spelling rules."""
    languages = {"javascript", "java", "go", "python", "cpp_stl", "csharp", "rust", "php", "ruby", "perl",
                 "lua", "nim"}
    assert set(KEYWORDS) == set(SPELLING) == languages


def test_the_check_finds_the_ids_issue_28_found() -> None:
    """The spellings reproduce the failures measured with the compiler's output (issue 28)."""
    assert "javascript Object" in _clashes("type", "object")
    assert "java Long" in _clashes("type", "long")
    assert "java boolean" in _clashes("field", "boolean")
    assert "lua function" in _clashes("enum_value", "function")
    assert "nim tuple" in _clashes("enum_value", "tuple")
    assert _clashes("field", "lua_boolean") == []


def test_every_id_is_usable_by_every_target() -> None:
    bad = [f"{where}: {', '.join(c)}" for kind, name, where in _all_ids() if (c := _clashes(kind, name))]
    assert not bad, "ids a target cannot spell:\n" + "\n".join(bad)


def test_no_id_has_a_form_some_target_refuses() -> None:
    """Ids are ASCII snake case: Nim refuses a trailing or doubled underscore (the old `global_`)."""
    bad = [where for _, name, where in _all_ids() if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", name)]
    assert not bad, bad
