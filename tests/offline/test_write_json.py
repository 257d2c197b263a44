"""``write_json.dumps_indented`` writes the text of ``json.dumps(value, indent=2,
sort_keys=True)`` (the standard library is the oracle): on fixed edge cases, on fuzzed
documents, and on values outside plain JSON (handed to ``json.dumps`` itself, errors included)."""

import json
import math
import random

import pytest

from eks_gpu_platform.offline.write_json import dumps_indented

EDGES = [
    {},
    [],
    {"a": {}, "b": [], "c": [{}], "d": [[]]},
    {"z": 1, "a": 2, "M": 3, "é": 4, "a b": 5, "": 6},
    ["é", "\u2028", "\x00\x1f", 'quote " and \\ slash', "tab\there\nnewline", "😀"],
    [0, -1, 10**30, 1.5, -0.0, 2.0, 1e300, 5e-324, math.nan, math.inf, -math.inf],
    [True, False, None, "true", "null"],
    ("a", ("b",)),
    {"nested": {"deep": {"er": [1, {"x": [None]}]}}},
    "scalar",
    7,
    None,
]


@pytest.mark.parametrize("value", EDGES, ids=range(len(EDGES)))
def test_edge_cases_are_the_standard_librarys_text(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True)


def test_the_layout():
    assert dumps_indented({"b": [1, {}], "a": "x"}) == (
        '{\n  "a": "x",\n  "b": [\n    1,\n    {}\n  ]\n}'
    )


def _fuzzed(rnd: random.Random, depth: int):
    kind = rnd.randrange(9 if depth < 5 else 6)
    if kind == 0:
        return rnd.choice([None, True, False])
    if kind == 1:
        return rnd.randint(-(10**20), 10**20)
    if kind == 2:
        return rnd.choice([rnd.uniform(-1e6, 1e6), float(rnd.randint(-9, 9)), 1e-7, 1e22])
    if kind in (3, 4, 5):
        alphabet = 'ab Z:-_"\\\n\t\x01é€😀\u2028/'
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(8)))
    if kind in (6, 7):
        return {_fuzzed_key(rnd): _fuzzed(rnd, depth + 1) for _ in range(rnd.randrange(5))}
    return [_fuzzed(rnd, depth + 1) for _ in range(rnd.randrange(5))]


def _fuzzed_key(rnd: random.Random) -> str:
    return "".join(rnd.choice("aAbB_-.é/1 ") for _ in range(rnd.randrange(6)))


def test_fuzzed_documents_are_the_standard_librarys_text():
    rnd = random.Random(3)
    for case in range(2000):
        value = _fuzzed(rnd, 0)
        assert dumps_indented(value) == json.dumps(value, indent=2, sort_keys=True), case


@pytest.mark.parametrize(
    "value",
    [{1: "a", "2": "b"}, {None: 1}, {"a": {2.5: [1]}}, {"a": [b"bytes"]}],
    ids=["int-key", "none-key", "float-key-nested", "bytes"],
)
def test_anything_else_is_the_standard_librarys_own(value):
    try:
        expected = json.dumps(value, indent=2, sort_keys=True)
    except TypeError as error:
        with pytest.raises(TypeError, match=str(error)):
            dumps_indented(value)
    else:
        assert dumps_indented(value) == expected
