"""Dict keys JSON has no form for: json.dumps makes them strings, so two
keys may become one and a value is silently lost. They are refused, before
anything is sent, as InvalidError naming the field and the key's path (a
JSON pointer, as diff's paths), as the TypeScript client refuses NaN."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError


def test_int_key_beside_its_string_is_invalid_not_lost(ws: cairnlog.Workspace) -> None:
    # json.dumps sent {1: "a", "1": "b"} as {"1":"a","1":"b"}, and the
    # server kept {"1": "b"}: "a" was gone without a word.
    c = ws.client
    with pytest.raises(InvalidError) as e:
        c.commit("s", {1: "a", "1": "b"})
    assert e.value.message == ('state: the key 1 at /1 is an int, not a str: JSON object keys are strings '
                               '(json would send it as "1", over any value under "1" beside it): send str keys')
    assert c.head("s") is None


@pytest.mark.parametrize("key, shown, token, kind", [
    (2, "2", "2", "an int"), (None, "None", "null", "a NoneType"), (1.5, "1.5", "1.5", "a float"),
    (True, "True", "true", "a bool"), ((1, 2), "(1, 2)", "(1, 2)", "a tuple")])
def test_a_key_that_is_no_str_is_invalid_anywhere_naming_its_path(ws: cairnlog.Workspace, key: object, shown: str,
                                                                    token: str, kind: str) -> None:
    c = ws.client
    deep = {"a/b": [{"x~": {"ok": 0, key: 1}}]}
    for call, where in [(lambda: c.commit("s", deep), "state: the key {} at /a~1b/0/x~0/{}"),
                        (lambda: c.commit("s", {}, record=deep), "record: the key {} at /a~1b/0/x~0/{}"),
                        (lambda: c.ask("s", {}, "q?", extra=deep), "record: the key {} at /extra/a~1b/0/x~0/{}")]:
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message.startswith(where.format(shown, token) + f" is {kind}, not a str: "), e.value.message
    assert c.head("s") is None
    c.commit("s", {}, status="awaiting_input", record={"question": "q?"})
    with pytest.raises(InvalidError) as e:
        c.reply("s", deep)
    assert e.value.message.startswith(f"value: the key {shown} at /a~1b/0/x~0/{token} is {kind}, not a str: ")
    assert c.head("s")["step"] == 1  # type: ignore[index]


def test_str_keys_and_their_subclasses_are_sent(ws: cairnlog.Workspace) -> None:
    class Name(str):
        pass

    ws.client.commit("s", {Name("n"): [{"k": ()}], "": {"1": 1}})
    assert ws.client.head("s")["state"] == {"n": [{"k": []}], "": {"1": 1}}  # type: ignore[index]
