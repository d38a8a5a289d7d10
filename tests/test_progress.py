"""Progress on a text stream: a tqdm bar on a terminal, plain lines (no carriage returns, at
most one per 10 % step or slow stretch) anywhere else."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tqdm import tqdm

from maxmargin.verification import progress as progress_module
from maxmargin.verification.progress import PlainProgress, is_terminal, progress_for
from maxmargin.verification.suite import run_suite


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_anything_else_plain_lines():
    assert isinstance(progress_for(5, FakeTerminal()), tqdm)
    assert isinstance(progress_for(5, io.StringIO()), PlainProgress)
    assert not is_terminal(object())  # no isatty at all
    closed = io.StringIO()
    closed.close()
    assert not is_terminal(closed)


@given(total=st.integers(1, 2000))
def test_plain_lines_one_per_tenth_and_a_last_one(total):
    stream = io.StringIO()
    bar = PlainProgress(total, stream)
    for i in range(total):
        bar.set_postfix_str(f"0 failed; case {i}")
        bar.update(1)
    bar.close()
    text = stream.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert 1 <= len(lines) <= 10  # at the 10 % crossings, the last of which is the end
    assert lines[-1].startswith(f"{total}/{total} checks (100%)")


def test_a_slow_stretch_writes_a_line_between_steps(monkeypatch):
    clock = iter(range(0, 10_000, 40))  # every call 40 s later than the last
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: float(next(clock)))
    stream = io.StringIO()
    bar = PlainProgress(1000, stream)
    for _ in range(3):
        bar.update(1)  # 0.3 % done: only the time makes the lines
    assert len(stream.getvalue().splitlines()) == 3


def test_time_left_leaves_out_the_first_step_and_waits_for_a_tenth(monkeypatch):
    """A first step that waited for a compile (600 s) does not set the rate: 99 steps of 1 s
    each after it leave 900 steps, 900 s (15:00), not 6.5 hours; "?" before a tenth is done."""
    now = [0.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    bar = PlainProgress(1000, stream)
    now[0] = 600.0
    bar.update(1)
    assert "?" in bar._line()
    for _ in range(99):
        now[0] += 1.0
        bar.update(1)
    assert bar._line().startswith("100/1000 checks (10%), 11:39 elapsed, 15:00 left")


def test_write_and_close_are_plain_and_close_adds_no_repeat():
    stream = io.StringIO()
    bar = PlainProgress(4, stream)
    bar.update(4)
    bar.write("FAIL something")
    bar.close()
    bar.close()
    assert stream.getvalue().splitlines() == [
        stream.getvalue().splitlines()[0], "FAIL something"]
    assert stream.getvalue().startswith("4/4 checks (100%)")


@pytest.mark.parametrize("terminal", [False, True])
def test_verify_on_a_pipe_has_no_carriage_returns(terminal):
    stream = FakeTerminal() if terminal else io.StringIO()
    run = run_suite("quick", "li_hang_7_1", progress=stream)
    text = stream.getvalue()
    assert ("\r" in text) == terminal
    if not terminal:
        n = len(run.rows)
        assert text.splitlines()[-1].startswith(f"{n}/{n} checks (100%)")
        assert len(text.splitlines()) <= 10
