"""The event-stream parser: the WHATWG rules, its bounds and ``retry:``."""

from __future__ import annotations

import pytest

from lfp_swarm_lease import ProtocolError
from lfp_swarm_lease._sse import Event, SSEParser

CASES = [
    ("LF", "event: current\ndata: {}\n\n", [("current", "{}")]),
    ("CRLF", "event: current\r\ndata: {}\r\n\r\n", [("current", "{}")]),
    ("CR", "event: current\rdata: {}\r\r", [("current", "{}")]),
    ("mixed endings", "event: a\r\ndata: 1\n\revent: b\rdata: 2\r\n\n", [("a", "1"), ("b", "2")]),
    ("multi-line data joined by LF", 'data: {"a":\ndata: 1}\n\n', [("message", '{"a":\n1}')]),
    ("comments anywhere", ": hello\nevent: change\n: keep-alive\ndata: x\n\n: keep-alive\n\n",
     [("change", "x")]),
    ("keep-alives only", ": keep-alive\n\n: keep-alive\n\n", []),
    ("no space after colon", "event:change\ndata:x\n\n", [("change", "x")]),
    ("only one space is removed", "data:  x \n\n", [("message", " x ")]),
    ("field without colon", "data\ndata\n\n", [("message", "\n")]),
    ("empty data line", "data:\n\n", [("message", "")]),
    ("id, retry and unknown fields ignored",
     "id: 7\nretry: 10\nfoo: bar\nevent: change\ndata: x\n\n", [("change", "x")]),
    ("event without data not dispatched; its name does not carry over",
     "event: a\n\ndata: x\n\n", [("message", "x")]),
    ("name resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n",
     [("a", "1"), ("message", "2")]),
    ("byte-order mark", "\ufeffevent: current\ndata: x\n\n", [("current", "x")]),
    ("unterminated event discarded", "event: a\ndata: 1\n\nevent: b\ndata: 2\n", [("a", "1")]),
    ("unterminated line discarded", "data: 1\n\ndata: 2", [("message", "1")]),
    ("colon in value", 'data: {"a":"b:c"}\n\n', [("message", '{"a":"b:c"}')]),
    ("UTF-8 across reads", "data: Grüße ☃\n\n", [("message", "Grüße ☃")]),
]


@pytest.mark.parametrize("stream,want", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_parsing_whole_and_byte_by_byte(stream: str, want: list[tuple[str, str]]) -> None:
    data = stream.encode()
    expected = [Event(name, text) for name, text in want]
    whole = SSEParser().feed(data)
    assert whole == expected
    # One byte per read: a line ending split across reads (CR | LF) must not make an extra
    # empty line, nor a UTF-8 character split across reads break.
    parser = SSEParser()
    one_by_one = [e for i in range(len(data)) for e in parser.feed(data[i:i + 1])]
    assert one_by_one == expected


def test_bare_cr_dispatches_at_once() -> None:
    parser = SSEParser()
    # The event is complete at its second CR; an LF may or may not follow later.
    assert parser.feed(b"data: x\r\r") == [Event("message", "x")]
    assert parser.feed(b"\ndata: y\r\r") == [Event("message", "y")]


def test_retry_is_read_in_seconds() -> None:
    parser = SSEParser()
    assert parser.retry is None
    parser.feed(b"retry: 1500\n\n")
    assert parser.retry == 1.5
    parser.feed(b"retry: soon\n\nretry:\n\n")
    assert parser.retry == 1.5, "a value that is not a number is ignored"


def test_a_line_over_the_bound_is_refused() -> None:
    parser = SSEParser(max_size=1024)
    with pytest.raises(ProtocolError, match="line over 1024 bytes"):
        parser.feed(b"data: " + b"x" * 1100)  # no line end yet: refused while buffering
    with pytest.raises(ProtocolError, match="line over 1024 bytes"):
        SSEParser(max_size=1024).feed(b"data: " + b"x" * 1100 + b"\n\n")


def test_an_event_over_the_bound_is_refused() -> None:
    parser = SSEParser(max_size=1024)
    line = b"data: " + b"x" * 200 + b"\n"
    with pytest.raises(ProtocolError, match="event's data over 1024 bytes"):
        parser.feed(line * 6)


def test_the_default_bound_is_one_mebibyte() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: " + b"x" * ((1 << 20) - 16) + b"\n\n")[0].data.startswith("xxx")
    with pytest.raises(ProtocolError):
        SSEParser().feed(b"data: " + b"x" * (1 << 20) + b"\n\n")
