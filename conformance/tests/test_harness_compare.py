"""The comparator catches what it must and forgives only what the contract allows
(spec/canonical.md#canonical-comparison)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from torchfmt.limits import WALK_FRAMES
from torchfmt.recursion import recursion_limit

from conformance.harness.cases import committed_cases, corpus_cases
from conformance.harness.compare import compare, parse_float

pytestmark = pytest.mark.spec("canonical.md#canonical-comparison")  # counted by spec/traceability.py

H0 = "0" * 64
H1 = "1" * 64
H2 = "2" * 64


def s(text: str) -> dict[str, Any]:
    return {"type": "str", "value": text}


def f(text: str) -> dict[str, Any]:
    return {"type": "float", "value": text}


def tensor(storage: str | None, **over: Any) -> dict[str, Any]:
    t = {"type": "tensor", "dtype": "float32", "shape": [2, 3], "stride": [3, 1], "storage_offset": 0,
         "storage": storage, "device": "cpu", "requires_grad": False, "sha256": H0}
    t.update(over)
    return t


def storage(sha: str = H0, numel: int = 6) -> dict[str, Any]:
    return {"dtype": "float32", "numel": numel, "device": "cpu", "sha256": sha}


def doc(*objects: Any, storages: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description_version": 0, "format": "pt-zip", "objects": list(objects),
            "storages": storages if storages is not None else {}}


def two_views() -> dict[str, Any]:
    """A dict of two tensors sharing one storage, a table, a list and a float."""
    return doc({"type": "dict", "items": [
        [s("a"), tensor("s0")],
        [s("b"), tensor("s0", shape=[3], stride=[1], storage_offset=3, sha256=H1)],
        [s("t"), {"type": "table", "items": [[s("x"), f("1")], [s("y"), f("2")], [f("3"), s("z")]]}],
        [s("l"), {"type": "list", "items": [f("0.5"), {"type": "int", "value": "7"}]}],
    ]}, storages={"s0": storage()})


def paths(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    return [d.path for d in compare(expected, actual)]


def edited(d: dict[str, Any], edit) -> dict[str, Any]:
    out = copy.deepcopy(d)
    edit(out)
    return out


def item(d: dict[str, Any], key: str) -> dict[str, Any]:
    return next(v for k, v in d["objects"][0]["items"] if k["value"] == key)


def test_equal_documents_have_no_difference() -> None:
    assert compare(two_views(), two_views()) == []


@pytest.mark.parametrize("field,value", [
    ("dtype", "float64"), ("shape", [3, 2]), ("stride", [1, 2]), ("storage_offset", 1),
    ("sha256", H2), ("device", "cuda:0"), ("requires_grad", True),
])
def test_each_tensor_field_is_compared(field: str, value: Any) -> None:
    actual = edited(two_views(), lambda d: item(d, "a").__setitem__(field, value))
    found = paths(two_views(), actual)
    assert found and all(p.startswith(f"$.objects[0].items[0 'a'][1].{field}") for p in found), found


@pytest.mark.parametrize("field,value", [("sha256", H2), ("numel", 7), ("dtype", "int32")])
def test_storage_records_are_compared(field: str, value: Any) -> None:
    actual = edited(two_views(), lambda d: d["storages"]["s0"].__setitem__(field, value))
    assert paths(two_views(), actual) == [f"$.storages.s0.{field}"]


def test_two_views_of_one_storage_are_not_two_storages() -> None:
    def split(d: dict[str, Any]) -> None:
        item(d, "b")["storage"] = "s1"
        d["storages"]["s1"] = storage()

    diffs = compare(two_views(), edited(two_views(), split))
    assert any("storage sharing differs" in d.message for d in diffs), diffs


def test_two_storages_are_not_one_shared_storage() -> None:
    def split(d: dict[str, Any]) -> None:
        item(d, "b")["storage"] = "s1"
        d["storages"]["s1"] = storage()

    diffs = compare(edited(two_views(), split), two_views())
    assert any("storage sharing differs" in d.message for d in diffs), diffs


def shared_list() -> dict[str, Any]:
    inner = {"type": "list", "items": [f("1")], "id": "o0"}
    return doc({"type": "list", "items": [inner, {"type": "ref", "id": "o0"}]})


def test_a_ref_is_not_a_copy() -> None:
    copied = doc({"type": "list", "items": [{"type": "list", "items": [f("1")]},
                                            {"type": "list", "items": [f("1")]}]})
    diffs = compare(shared_list(), copied)
    assert [d.path for d in diffs] == ["$.objects[0].items[0]", "$.objects[0].items[1]"]
    assert all("sharing differs" in d.message for d in diffs)
    assert compare(copied, shared_list()) != []


def test_two_distinct_shared_objects_are_not_one() -> None:
    a = {"type": "list", "items": [f("1")], "id": "A"}
    b = {"type": "list", "items": [f("1")], "id": "B"}
    expected = doc({"type": "list", "items": [a, b, {"type": "ref", "id": "A"},
                                              {"type": "ref", "id": "B"}]})
    one = {"type": "list", "items": [f("1")], "id": "X"}
    actual = doc({"type": "list", "items": [one, {"type": "ref", "id": "X"},
                                            {"type": "ref", "id": "X"}, {"type": "ref", "id": "X"}]})
    assert any("sharing differs" in d.message for d in compare(expected, actual))


def test_renamed_ids_are_equal() -> None:
    renamed = json.loads(json.dumps(shared_list()).replace('"o0"', '"zz-17"'))
    assert compare(shared_list(), renamed) == []
    restored = json.loads(json.dumps(two_views()).replace('"s0"', '"blob"'))
    assert compare(two_views(), restored) == []


def test_reordered_table_and_set_items_are_equal() -> None:
    def reorder(d: dict[str, Any]) -> None:
        item(d, "t")["items"].reverse()

    assert compare(two_views(), edited(two_views(), reorder)) == []
    sets = [doc({"type": "set", "items": [f("1"), f("2"), s("x")]}),
            doc({"type": "set", "items": [s("x"), f("2"), f("1")]})]
    assert compare(*sets) == []


def test_reordered_dict_and_list_items_differ() -> None:
    def reorder(d: dict[str, Any]) -> None:
        d["objects"][0]["items"].reverse()

    assert compare(two_views(), edited(two_views(), reorder)) != []
    assert compare(doc({"type": "list", "items": [f("1"), f("2")]}),
                   doc({"type": "list", "items": [f("2"), f("1")]})) != []


def test_where_the_full_copy_sits_in_a_table_does_not_matter() -> None:
    shared = {"type": "table", "items": [[s("k"), f("1")]]}
    expected = doc({"type": "table", "items": [[s("a"), {**shared, "id": "o0"}],
                                               [s("b"), {"type": "ref", "id": "o0"}]]})
    actual = doc({"type": "table", "items": [[s("b"), {**shared, "id": "x"}],
                                             [s("a"), {"type": "ref", "id": "x"}]]})
    assert compare(expected, actual) == []


def test_cycles_compare_and_rename() -> None:
    # t[t] = t: a table whose only item has the table itself as key and value
    def cyc(name: str) -> dict[str, Any]:
        ref = {"type": "ref", "id": name}
        return doc({"type": "table", "id": name, "items": [[ref, ref]]})

    assert compare(cyc("o0"), cyc("T")) == []
    broken = doc({"type": "table", "id": "T", "items": [[{"type": "ref", "id": "T"},
                                                         {"type": "table", "items": []}]]})
    assert compare(cyc("o0"), broken) != []


def test_tied_table_items_are_matched_through_their_ids() -> None:
    # two items whose keys look alike once ids are erased: the ids decide the pairing
    def d(order: list[int], names: tuple[str, str]) -> dict[str, Any]:
        a, b = names
        objs = {a: {"type": "table", "id": a, "items": [[s("n"), f("1")]]},
                b: {"type": "table", "id": b, "items": [[s("n"), f("2")]]}}
        pairs = [[{"type": "ref", "id": a}, s("first")], [{"type": "ref", "id": b}, s("second")]]
        return doc({"type": "list", "items": [objs[a], objs[b],
                                              {"type": "table", "items": [pairs[i] for i in order]}]})

    assert compare(d([0, 1], ("o0", "o1")), d([1, 0], ("p", "q"))) == []
    swapped = d([0, 1], ("p", "q"))
    swapped["objects"][0]["items"][2]["items"][0][1] = s("second")
    swapped["objects"][0]["items"][2]["items"][1][1] = s("first")
    assert compare(d([0, 1], ("o0", "o1")), swapped) != []


def test_a_wrong_table_value_is_named_by_its_path() -> None:
    def wrong(d: dict[str, Any]) -> None:
        item(d, "t")["items"][1][1] = f("2.5")

    diffs = compare(two_views(), edited(two_views(), wrong))
    # the keys along the way are in the path, beside the positions
    assert [d.path for d in diffs] == ["$.objects[0].items[2 't'][1].items[1 'y'][1].value"]


@pytest.mark.parametrize("a,b", [
    ("nan", "nan"), ("nan", "-nan"), ("nan", "NaN"), ("1", "1.0"), ("42", "42.0"), ("1", "0x1p0"),
    ("1", "1e0"), ("0.1", "0x1.999999999999ap-4"), ("-0.0", "-0x0p+0"), ("inf", "Infinity"),
    ("0.1", "0.1000000000000000055511"),
])
def test_float_literals_naming_the_same_double_are_equal(a: str, b: str) -> None:
    assert compare(doc(f(a)), doc(f(b))) == []


@pytest.mark.parametrize("a,b", [("0.0", "-0.0"), ("0.1", "0.10000000000000002"), ("inf", "-inf"),
                                 ("nan", "inf"), ("1", "1_0"), ("1", "one"), ("1", "")])
def test_float_literals_naming_different_doubles_differ(a: str, b: str) -> None:
    assert compare(doc(f(a)), doc(f(b))) != []


def test_float_values_must_be_strings() -> None:
    assert compare(doc(f("1")), doc({"type": "float", "value": 1.0})) != []
    assert parse_float(1.0) is None


def test_ints_compare_as_integers_and_scalars_keep_their_json_type() -> None:
    big = "123456789012345678901234567890"
    assert compare(doc({"type": "int", "value": big}), doc({"type": "int", "value": big})) == []
    assert compare(doc({"type": "int", "value": "1"}), doc({"type": "int", "value": "2"})) != []
    assert compare(doc({"type": "bool", "value": True}), doc({"type": "bool", "value": 1})) != []
    assert compare(doc(tensor(None, storage_offset=1)), doc(tensor(None, storage_offset=1.0))) != []
    assert compare(doc({"type": "int", "value": "1"}), doc(f("1"))) != []


def test_notes_an_absent_version_and_defaults_are_not_differences() -> None:
    expected = doc(tensor(None), {"type": "ordered_dict", "items": []})
    actual = doc({**tensor(None), "parameter": False, "_note": "x"},
                 {"type": "ordered_dict", "items": [], "attrs": {}})
    del actual["description_version"]
    actual["_loaded_with"] = "anything"
    assert compare(expected, actual) == []
    assert compare(actual, expected) == []


def state_dict(metadata: Any, **attrs: Any) -> dict[str, Any]:
    """An ordered dict as torch's state_dict: one tensor, and ``_metadata`` (and ``attrs``) as attrs."""
    return {"type": "ordered_dict", "items": [[s("w"), tensor(None)]],
            "attrs": {"_metadata": metadata, **attrs}}


VERSION_1 = {"type": "dict", "items": [[s("version"), {"type": "int", "value": "1"}]]}
META = {"type": "ordered_dict", "items": [[s(""), VERSION_1]]}


@pytest.mark.parametrize("actual", [
    {"type": "ordered_dict", "items": [[s("w"), tensor(None)]]},  # _metadata dropped
    {"type": "ordered_dict", "items": [[s("w"), tensor(None)]], "attrs": {}},
    state_dict({"type": "none"}),  # garbage in its place
    state_dict(edited({"o": META}, lambda m: m["o"]["items"][0][1]["items"][0][1].update(value="2"))["o"]),
    state_dict(META, _private=s("x")),  # an attribute torch does not have
    {"type": "ordered_dict", "items": [[s("w"), tensor(None)]], "attrs": {"metadata": META}},
])
def test_attrs_names_are_data_underscore_or_not(actual: dict[str, Any]) -> None:
    """The comparator skipped every ``_`` member at any depth: a reader that dropped a state_dict's
    ``_metadata``, or wrote garbage there, passed every case that carries it."""
    assert compare(doc(state_dict(META)), doc(actual)) != []
    assert compare(doc(actual), doc(state_dict(META))) != []


def test_notes_are_only_where_the_spec_defines_them() -> None:
    """Notes: members of the document and fields of a VALUE, at any depth; a STORAGE record has none,
    and a dict key named ``_x`` is a VALUE like any other."""
    base = two_views()
    noted = edited(base, lambda d: (d.__setitem__("_n", 1), item(d, "t").__setitem__("_n", 2),
                                    item(d, "a").__setitem__("_n", [3])))
    assert compare(base, noted) == [] and compare(noted, base) == []
    assert paths(base, edited(base, lambda d: d["storages"]["s0"].__setitem__("_n", 1))) == \
        ["$.storages.s0._n"]
    keyed = doc({"type": "dict", "items": [[s("_x"), s("1")]]})
    assert compare(keyed, doc({"type": "dict", "items": [[s("_y"), s("1")]]})) != []
    assert compare(keyed, doc({"type": "dict", "items": []})) != []
    table = doc({"type": "table", "items": [[s("_x"), s("1")], [s("y"), s("2")]]})
    assert compare(table, doc({"type": "table", "items": [[s("y"), s("2")], [s("_x"), s("3")]]})) != []


def test_ids_inside_underscore_attrs_are_matched() -> None:
    """An attribute's value is walked for ids as any other value: a ref into ``_metadata`` resolves."""
    shared = {"type": "list", "items": [], "id": "o1"}
    expected = doc({"type": "list", "items": [state_dict(shared), {"type": "ref", "id": "o1"}]})
    renamed = doc({"type": "list", "items": [state_dict({**shared, "id": "x"}), {"type": "ref", "id": "x"}]})
    unshared = doc({"type": "list", "items": [state_dict({"type": "list", "items": []}),
                                              {"type": "list", "items": []}]})
    assert compare(expected, renamed) == []
    assert compare(expected, unshared) != []
    in_set = doc({"type": "set", "items": [state_dict(META), state_dict(META, _x=s("1"))]})
    assert compare(in_set, edited(in_set, lambda d: d["objects"][0]["items"].reverse())) == []
    other = doc({"type": "set", "items": [state_dict(META), state_dict(META, _x=s("2"))]})
    assert compare(in_set, other) != []


@pytest.mark.parametrize("version", [1, 9, "0", False, 0.0, None])
def test_a_description_of_another_version_differs(version: object) -> None:
    """spec/canonical.md#canonical-document: version 0 is what these rules compare."""
    actual = {**doc(tensor(None)), "description_version": version}
    assert paths(doc(tensor(None)), actual) == ["$.description_version"]


def test_one_sided_fields_differ() -> None:
    assert paths(doc(tensor(None)), doc({**tensor(None), "parameter": True})) == \
        ["$.objects[0].parameter"]
    assert paths(doc(tensor(None)), doc({**tensor(None), "layout": "strided"})) == ["$.objects[0].layout"]
    no_device = tensor(None)
    del no_device["device"]
    assert paths(doc(tensor(None)), doc(no_device)) == ["$.objects[0].device"]
    assert compare(doc(), {**doc(), "extra": 1}) != []


def test_storages_nothing_refers_to_differ() -> None:
    assert paths(two_views(), edited(two_views(), lambda d: d["storages"].__setitem__("s9", storage()))) \
        == ["$.storages.s9"]


def test_malformed_actual_documents_are_differences() -> None:
    assert compare(two_views(), [1]) != []
    dangling = doc({"type": "list", "items": [{"type": "ref", "id": "nowhere"}]})
    assert compare(shared_list(), dangling) != []
    twice = doc({"type": "list", "items": [{"type": "list", "items": [], "id": "x"},
                                           {"type": "list", "items": [], "id": "x"}]})
    assert any("twice" in d.message for d in compare(twice, twice))
    assert compare(doc(s("x")), doc({"type": "bytes", "hex": "78"})) != []


# -- invariance over real expectations: renaming ids and reordering unordered items changes nothing,
# -- and one wrong hash is always caught

def _expectations() -> list[Any]:
    docs = [c for c in committed_cases() + corpus_cases() if c.description is not None]
    return [pytest.param(c.description, id=c.id) for c in docs][:400]


@pytest.fixture(autouse=True)
def deep_recursion():
    """Deeply nested expectations (e.g. deep-nesting cases) need more than 1000 frames to copy."""
    with recursion_limit(WALK_FRAMES):
        yield


def scramble(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(d)
    ids: dict[str, str] = {}
    sids = {k: f"S{n}-{rng.randrange(1000)}" for n, k in enumerate(out["storages"])}

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            if isinstance(v.get("type"), str):
                if isinstance(v.get("id"), str):
                    v["id"] = ids.setdefault(v["id"], f"X{len(ids)}-{rng.randrange(1000)}")
                holds_storage = v["type"] in ("tensor", "quantized_tensor", "storage")
                if holds_storage and isinstance(v.get("storage"), str):
                    v["storage"] = sids[v["storage"]]
                if v["type"] in ("table", "set"):
                    rng.shuffle(v["items"])
            for k, x in v.items():
                if k != "id":
                    walk(x)

    walk(out["objects"])
    out["storages"] = {sids[k]: v for k, v in out["storages"].items()}
    return out


@pytest.mark.parametrize("expected", _expectations() or [pytest.param(two_views(), id="builtin")])
def test_scrambled_ids_and_orders_compare_equal(expected: dict[str, Any]) -> None:
    assert compare(expected, scramble(expected, random.Random(7))) == []


@pytest.mark.parametrize("expected", _expectations() or [pytest.param(two_views(), id="builtin")])
def test_one_wrong_storage_hash_is_caught(expected: dict[str, Any]) -> None:
    if not expected["storages"]:
        expected = two_views()
    actual = scramble(expected, random.Random(3))
    victim = sorted(actual["storages"])[0]
    actual["storages"][victim]["sha256"] = H2 if actual["storages"][victim]["sha256"] != H2 else H1
    assert compare(expected, actual) != []


def test_unordered_keys_cost_what_the_document_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching unordered items keys each node once, from its children's keys: a table nested 1,024 deep
    (t7-binary/spec-nesting-tables-1024) spells out no more JSON text than a few times its own size (keys
    spelled out whole at every level wrote each subtree once per level above it: 4,090 dumps, seconds)."""
    import conformance.harness.compare as module

    doc = next(c for c in committed_cases() if c.id == "t7-binary/spec-nesting-tables-1024").description
    assert doc is not None
    written = [0]
    real = json.dumps

    def counting(*args: Any, **kwargs: Any) -> str:
        text = real(*args, **kwargs)
        written[0] += len(text)
        return text

    monkeypatch.setattr(module.json, "dumps", counting)
    assert compare(doc, copy.deepcopy(doc)) == []
    assert 0 < written[0] <= 4 * len(real(doc))
    monkeypatch.setattr(module.json, "dumps", real)
    deepest = copy.deepcopy(doc)
    node = deepest["objects"][0]
    while node.get("items") and isinstance(node["items"][0][1], dict) and node["items"][0][1].get("items"):
        node = node["items"][0][1]
    node["items"][0][1] = {"type": "str", "value": "changed"}
    assert compare(doc, deepest) != []


def test_unordered_items_equal_but_for_sharing_find_their_partners() -> None:
    """Items of a set whose keys are equal once ids are erased (refs to two different shared lists) are
    tried against each other until one compares clean: the set reordered is equal, and a failed trial
    leaves no difference behind (``_Comparator.unordered``: ``len(self.diffs) == mark[1]``; a judge that
    kept the first trial failed this equal document)."""
    def shared(name: str, value: str) -> dict[str, Any]:
        return {"type": "list", "items": [f(value)], "id": name}

    def ref(name: str) -> dict[str, Any]:
        return {"type": "ref", "id": name}

    expected = doc(shared("o1", "1"), shared("o2", "2"), {"type": "set", "items": [ref("o1"), ref("o2")]})
    actual = doc(shared("p1", "1"), shared("p2", "2"), {"type": "set", "items": [ref("p2"), ref("p1")]})
    assert compare(expected, actual) == []
    swapped = doc(shared("p1", "2"), shared("p2", "1"), {"type": "set", "items": [ref("p2"), ref("p1")]})
    assert compare(expected, swapped) != []


def test_a_malformed_value_in_an_unordered_container_is_a_difference() -> None:
    """An actual value whose items are no array, inside a set or a table, is a difference like any other
    malformed value: the comparison does not raise (a raise is a harness error, not the reader's
    wrong description); ``_Side._value_key`` keys a value's ``items`` as a multiset only for a set or
    a table whose items are an array."""
    for bad in (5, None, {"a": 1}):
        expected = doc({"type": "set", "items": [{"type": "list", "items": []}]})
        actual = doc({"type": "set", "items": [{"type": "list", "items": bad}]})
        assert compare(expected, actual) != []
        table = doc({"type": "table", "items": [[s("k"), {"type": "tuple", "items": [f("1")]}]]})
        wrong = doc({"type": "table", "items": [[s("k"), {"type": "tuple", "items": bad}]]})
        assert compare(table, wrong) != []
    # a list's items are ordered inside a set too: reordered, it is another list
    assert compare(doc({"type": "set", "items": [{"type": "list", "items": [f("1"), f("2")]}]}),
                   doc({"type": "set", "items": [{"type": "list", "items": [f("2"), f("1")]}]})) != []


@pytest.mark.spec("canonical.md#canonical-sharing")
def test_a_value_id_that_is_not_a_string_is_a_difference() -> None:
    """Value ids are strings (spec/canonical.md#canonical-sharing): an id of another JSON type is a
    difference where it stands, named once; the value is not read as shared under it (``_identity``:
    ``isinstance(ident, str)``; the judge passed an unshared list written with ``"id": 5``)."""
    for bad in (5, None, True, ["o0"]):
        listed = doc({"type": "list", "items": [f("1")], "id": bad})
        diffs = compare(doc({"type": "list", "items": [f("1")]}), listed)
        assert [(d.path, "not a string" in d.message) for d in diffs] == [("$.objects[0]", True)], diffs
    assert compare(shared_list(), shared_list()) == []


def test_every_expected_description_has_no_difference_from_itself() -> None:
    """What lets the verdict skip the walk for a reader's document that is the expected one's text
    (harness/verdict.py, compare.py ``same_text``): no expectation of the suite differs from itself."""
    docs = [c for c in committed_cases() + corpus_cases() if c.description is not None]
    assert len(docs) > 500
    differ = {c.id: compare(c.description, copy.deepcopy(c.description))[:2] for c in docs}
    assert not {k: v for k, v in differ.items() if v}


def test_the_same_text_is_told_from_equal_values() -> None:
    """``1``, ``1.0`` and ``true`` are equal in Python, not in JSON: only the same text skips the walk."""
    from conformance.harness.compare import same_text

    noted = {**two_views(), "_loaded_with": "torch.load(weights_only=True)"}
    assert same_text(two_views(), two_views()) and same_text(noted, two_views())
    a, b = doc({"type": "int", "value": "1"}), doc({"type": "int", "value": "1"})
    b["objects"][0]["value"] = 1
    assert not same_text(a, b) and compare(a, b) != []
    for one, other in ((1, True), (1, 1.0), (0, False)):
        assert one == other and not same_text({"x": one}, {"x": other})
    assert not same_text(doc(s("x"), s("y")), doc(s("y"), s("x")))
    assert not same_text(doc(s("x")), {**doc(s("x")), "extra": 1})
