"""States and records a JSON body cannot carry as they are: what the user gets."""

from __future__ import annotations

import math

import pytest

import cairnlog
from cairnlog import InvalidError


@pytest.mark.parametrize("field", ["state", "record"])
@pytest.mark.parametrize("text", ["\ud800", "a\udc00b"])
def test_lone_surrogates_are_invalid_as_in_typescript(ws: cairnlog.Workspace, field: str, text: str) -> None:
    # A Python str can hold half a surrogate pair; encoding it as UTF-8
    # used to raise UnicodeEncodeError, none of the client's errors. It is
    # sent escaped, as JSON.stringify does, and the server's 400 names the
    # field, as the TypeScript client gets.
    c = ws.client
    with pytest.raises(InvalidError) as e:
        if field == "state":
            c.commit("s", {"t": text})
        else:
            c.commit("s", {}, record={"t": text})
    assert e.value.message.startswith(f"{field}: the escape \\u")
    assert "half of a UTF-16 surrogate pair" in e.value.message
    assert c.head("s") is None


def test_surrogate_pair_halves_side_by_side_are_one_character(ws: cairnlog.Workspace) -> None:
    c = ws.client
    c.commit("s", {"t": "\ud83d\ude00", "u": "ü"})
    assert c.head("s")["state"] == {"t": "\U0001F600", "u": "ü"}  # type: ignore[index]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_invalid_in_words(ws: cairnlog.Workspace, value: float) -> None:
    # json.dumps wrote NaN, which is no JSON: the server's answer was
    # "request body is not valid JSON at byte 10".
    with pytest.raises(InvalidError) as e:
        ws.client.commit("s", {"x": [1, value]})
    assert e.value.message.startswith("state: ")
    assert ("NaN" in e.value.message or "Infinity" in e.value.message) and "byte" not in e.value.message
    assert ws.client.head("s") is None


def test_too_deep_a_state_is_invalid(ws: cairnlog.Workspace) -> None:
    # Deeper than Python's recursion limit: json.dumps used to raise
    # RecursionError. Deeper than the server's limit but encodable: the
    # server's 400. Both InvalidError, naming the state.
    for depth in (600, 100_000):
        doc: list = []
        inner = doc
        for _ in range(depth):
            inner.append([])
            inner = inner[0]
        with pytest.raises(InvalidError) as e:
            ws.client.commit("deep", doc)
        assert "nested too deep" in e.value.message and "deep" in e.value.message
    assert ws.client.head("deep") is None


def test_a_state_that_is_no_json_value_is_a_type_error(ws: cairnlog.Workspace) -> None:
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        ws.client.commit("s", {"x": {1, 2}})


@pytest.mark.parametrize("value,kind,hint", [
    ({1, 2}, "a set", "a list"), (b"ab", "a bytes object", "a str (decoded, or base64)"),
    (object(), "an object", "a dict, list, str, number, bool or None"),
])
def test_a_value_json_has_no_form_for_is_named_by_its_place(ws: cairnlog.Workspace, value: object, kind: str,
                                                             hint: str) -> None:
    # It was json's "Object of type set is not JSON serializable": no word
    # of where, in a state of thousands of values.
    for call, field, at in [
        (lambda: ws.client.commit("s", {"a": [1, {"x/y": value}]}), "state", " at /a/1/x~1y"),
        (lambda: ws.client.commit("s", {}, record={"r": (value,)}), "record", " at /r/0"),
        (lambda: ws.client.commit("s", value), "state", ""),
    ]:
        with pytest.raises(TypeError) as e:
            call()
        name = type(value).__name__
        assert str(e.value) == (f"{field}: the value{at} is {kind}, which JSON has no form for "
                                f"(Object of type {name} is not JSON serializable): send {hint}")
    assert ws.client.head("s") is None


def test_negative_zero_is_kept(ws: cairnlog.Workspace) -> None:
    # -0.0 goes out as -0.0, a number text of its own: it reads back as -0.0.
    ws.client.commit("z", {"x": -0.0, "y": 0.0})
    st = ws.client.head("z")["state"]  # type: ignore[index]
    assert math.copysign(1, st["x"]) == -1 and math.copysign(1, st["y"]) == 1


@pytest.mark.parametrize("value,shown", [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")])
def test_nan_and_infinity_are_named_by_their_place(ws: cairnlog.Workspace, value: float, shown: str) -> None:
    # It said "state: NaN and infinities are not JSON numbers", not where:
    # in a state of thousands of values, the caller had to search. As the
    # TypeScript client names it (and as a set's place is named).
    c = ws.client
    for call, field, at in [(lambda: c.commit("s", {"x": [1, {"a/b": value}]}), "state", " at /x/1/a~1b"),
                            (lambda: c.commit("s", value), "state", ""),
                            (lambda: c.commit("s", {}, record={"cost": value}), "record", " at /cost"),
                            (lambda: c.reply("s", [0, value]), "value", " at /1")]:
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message == (f"{field}: the value{at} is {shown}, which JSON has no number for: "
                                   "send null or a string instead")
    assert c.head("s") is None
