"""The debounce counts from when a change was read, not from when the server got to it.

A change read while a check was running has already waited that long: it is due when
the debounce has passed since it arrived, not a whole debounce after the check ends.
"""

from __future__ import annotations

import time
from pathlib import Path

from kb.lsp.server import Server


def test_a_change_read_during_a_check_is_due_when_its_debounce_has_passed(tmp_path: Path) -> None:
    server = Server(write=lambda data: None, debounce=0.2)
    server.received = time.monotonic() - 0.5  # read half a second ago, handled now
    server._changed(tmp_path)
    assert server.due() == 0.0
    assert server.next_root() == tmp_path


def test_a_change_handled_as_it_is_read_waits_the_whole_debounce(tmp_path: Path) -> None:
    server = Server(write=lambda data: None, debounce=0.2)
    server._changed(tmp_path)  # received: None, as when a message is handled on arrival
    due = server.due()
    assert due is not None and 0.1 < due <= 0.2
    assert server.next_root() is None


def test_a_clock_read_later_than_now_is_taken_as_now(tmp_path: Path) -> None:
    server = Server(write=lambda data: None, debounce=0.2)
    server.received = time.monotonic() + 60
    server._changed(tmp_path)
    due = server.due()
    assert due is not None and due <= 0.2
