"""A bounded run of bench/load.py in CI: 1,000 mixed reads with 16 in flight over stdio to a
real server, one in every 100 of a hostile file (a fuzz-found PDF page and PPTX, a PNG that
crashes its worker), then cancellation of reads that never end and a reader failing
unexpectedly (see the script's docstring). The script's timings are figures for
bench/README.md; nothing here checks one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import load  # noqa: E402


@pytest.fixture(scope="module")
def figures() -> dict:
    return load.run(requests=1_000, in_flight=16, seed=7)


def test_no_answer_is_lost_or_mismatched(figures):
    assert figures["load"]["lost"] == 0 and figures["load"]["mismatched"] == 0, figures["load"]["examples"]


def test_every_hostile_read_is_answered_and_costs_no_good_one(figures):
    load_ = figures["load"]
    assert load_["hostile_reads"] > 0 and sum(load_["hostile_answers"].values()) == load_["hostile_reads"], load_
    assert load_["hostile_answers"].get("internal"), "the crashing PNG was read at least once: answered internal"


def test_memory_stays_flat_after_warm_up(figures):
    assert figures["load"]["rss_growth"] <= load.MAX_GROWTH, figures["load"]


def test_cancelled_reads_answer_and_free_their_threads(figures):
    """Every read thread held a read that never ends; reads needing a thread answered only because
    the cancels freed them (the deadline is longer than the wait), and each cancelled read let go
    of its file."""
    cancel = figures["cancel"]
    assert cancel["slow_reads_under_way"], cancel
    assert cancel["cancel_codes"] == [-32800] * cancel["slow_reads_cancelled"]
    assert cancel["quick_reads_ok"] and cancel["slow_reads_ended"], cancel


def test_the_server_answers_after_a_reader_failed_unexpectedly(figures):
    fault = figures["fault"]
    assert fault["unexpected_read_is_error_result"] and fault["next_request_answers"], fault


def test_an_unexpected_reader_failure_is_an_internal_error_result(figures):
    assert figures["fault"]["unexpected_read_code"] == "internal"
