"""An incremental parser of ``text/event-stream``, bounded."""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import ProtocolError

#: Bounds one line and one event's data. A state is well under 1 KiB; anything longer is not
#: from an lfp-swarm-lease server, and buffering it without bound would let such a peer exhaust
#: memory. The npm client's bound.
MAX_EVENT = 1 << 20

_CR, _LF = 0x0D, 0x0A


@dataclass(frozen=True)
class Event:
    """One dispatched event."""

    name: str
    """The event type; ``"message"`` when the stream named none."""
    data: str


class SSEParser:
    """Parses a stream as the WHATWG HTML standard defines it: lines end in CRLF, LF or CR;
    lines starting with ``:`` are comments; ``field: value`` lines with one optional space
    after the colon; ``data`` lines accumulate, joined by LF; a blank line dispatches the event;
    a byte-order mark may precede the first line. ``retry`` sets :attr:`retry` (the server's
    reconnection time); ``id`` and other fields are ignored — every connection starts with the
    complete current state, so there is nothing to resume.

    A line, or an event's data, over ``max_size`` bytes raises :class:`ProtocolError`.
    """

    def __init__(self, max_size: int = MAX_EVENT) -> None:
        self.max_size = max_size
        self.retry: float | None = None
        """The last ``retry:`` value, in seconds (``None``: the server sent none)."""
        self._buf = bytearray()
        self._skip_lf = False  # the last line ended in CR: an LF right after it belongs to it
        self._first = True  # no line read yet: a byte-order mark may come
        self._name = ""
        self._data: list[str] = []
        self._data_size = 0

    def feed(self, chunk: bytes) -> list[Event]:
        """The events that ``chunk`` completes. A line is complete as soon as its CR arrives,
        without waiting for a possible LF: a stream of bare CRs would otherwise hold every event
        back until the server's next write."""
        buf = self._buf
        buf += chunk
        events: list[Event] = []
        start, n = 0, len(buf)
        # Where the next CR and LF are, searched once per pass over the buffer rather than once
        # per line, so that a chunk of many lines costs linear time.
        next_cr = next_lf = -2
        while start < n:
            if self._skip_lf:
                self._skip_lf = False
                if buf[start] == _LF:
                    start += 1
                    continue
            if next_cr != -1 and next_cr < start:
                next_cr = buf.find(b"\r", start)
            if next_lf != -1 and next_lf < start:
                next_lf = buf.find(b"\n", start)
            ends = [i for i in (next_cr, next_lf) if i >= 0]
            if not ends:
                break
            end = min(ends)
            if end - start > self.max_size:
                raise ProtocolError(f"an event-stream line over {self.max_size} bytes")
            self._skip_lf = buf[end] == _CR
            event = self._line(bytes(buf[start:end]))
            start = end + 1
            if event is not None:
                events.append(event)
        del buf[:start]
        if len(buf) > self.max_size:
            raise ProtocolError(f"an event-stream line over {self.max_size} bytes")
        return events

    def _line(self, raw: bytes) -> Event | None:
        if self._first:
            self._first = False
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        if not raw:
            if not self._data:
                self._name = ""  # an event without data is not dispatched; its name is dropped
                return None
            event = Event(self._name or "message", "\n".join(self._data))
            self._name, self._data, self._data_size = "", [], 0
            return event
        if raw[0] == ord(":"):
            return None
        field, _, value = raw.partition(b":")
        value = value.removeprefix(b" ")
        if field == b"event":
            self._name = value.decode("utf-8", errors="replace")
        elif field == b"data":
            self._data_size += len(value) + 1
            if self._data_size > self.max_size:
                raise ProtocolError(f"an event's data over {self.max_size} bytes")
            self._data.append(value.decode("utf-8", errors="replace"))
        elif field == b"retry" and value.isdigit():
            self.retry = int(value) / 1000
        return None
