"""A token an Authorization header cannot carry is refused up front."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError


@pytest.mark.parametrize("token, shown", [("tok\n", "U+000A"), ("a\r\nb", "U+000D"), ("a\0b", "U+0000"),
                                          ("é", "U+00E9"), ("\u2603", "U+2603"), ("a\x7fb", "U+007F")])
def test_a_token_with_a_character_no_header_carries_is_invalid(ws: cairnlog.Workspace, token: str, shown: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # A newline was http.client's bare ValueError ("Invalid header value")
    # on the first call, a snowman UnicodeEncodeError: none of the
    # client's errors, and nothing said it was the token.
    want = f"token: it holds {shown}, a character an HTTP header cannot carry: want printable ASCII"
    with pytest.raises(InvalidError) as e:
        cairnlog.Client(ws.url, token)
    assert e.value.message.startswith(want), e.value.message
    with pytest.raises(InvalidError):
        cairnlog.open(url=ws.url, token=token)
    if "\0" not in token:  # (no environment holds one)
        monkeypatch.setenv("CAIRN_TOKEN", token)
        with pytest.raises(InvalidError) as e:
            cairnlog.Client(ws.url)
        assert e.value.message.startswith(want)
    # Set on a client made before, it is refused at the next call.
    c = cairnlog.Client(ws.url, "good")
    c.token = token
    with pytest.raises(InvalidError) as e:
        c.commit("s", {})
    assert e.value.message.startswith(want)
    assert ws.client.head("s") is None


def test_a_printable_token_with_spaces_is_sent(ws: cairnlog.Workspace) -> None:
    # Not this server's token: its 401, which shows the header went out.
    with pytest.raises(cairnlog.UnauthorizedError):
        cairnlog.Client(ws.url, "a b\tc~").head("s")
