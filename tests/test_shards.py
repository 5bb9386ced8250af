"""The shared shard runner: resume, finishing from every intermediate state, refusal rules, merge.

Crash states are produced directly (a fault-injection point or a crafted file state), never by
timing; each test checks the bytes against an uninterrupted run.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from paraamr import shards
from paraamr.corpus.errors import SkipLog
from paraamr.shards import (
    ChunkOutput,
    Shard,
    ShardError,
    merge_streams,
    merged_rows,
    run_shard,
    shard_states,
    stream_path,
)

STREAMS = ("records", "rejects")
ITEMS = list(range(1, 24))  # 23 items, chunks of 5 -> 5 chunks, the last one short


def _process(chunk: list[int]) -> ChunkOutput:
    """Odd items become records, multiples of 3 rejects (some items both, some neither)."""
    return ChunkOutput(
        {
            "records": [{"line": x, "v": x * x} for x in chunk if x % 2],
            "rejects": [{"line": x, "why": "three"} for x in chunk if x % 3 == 0],
        },
        Counter(odd=sum(x % 2 for x in chunk)),
    )


def _run(out, shard=None, items=None, settings=None, **kw):
    shard = shard or Shard()
    own = shard.select(ITEMS if items is None else items)
    return run_shard(own, _process, out, shard=shard, streams=STREAMS,
                     settings=settings or {"v": 1}, chunk_size=5, progress=False, **kw)  # fmt: skip


def _files(out, shard=None):
    shard = shard or Shard()
    return {s: stream_path(out, shard, s).read_bytes() for s in STREAMS}


@pytest.fixture
def reference(tmp_path):
    state = _run(tmp_path / "ref")
    return _files(tmp_path / "ref"), state


@pytest.fixture
def fault(monkeypatch):
    """``fault("after_rename:records", n=1)``: crash (raise) the n-th time that point is hit."""

    class Crash(Exception):
        pass

    hits = Counter()

    def arm(point: str, n: int = 1):
        def hook(p: str) -> None:
            if p == point:
                hits[p] += 1
                if hits[p] == n:
                    raise Crash(p)

        monkeypatch.setattr(shards, "FAULT", hook)
        return Crash

    arm.hits = hits
    return arm


def test_reference_run_writes_what_a_hand_computation_says(reference):
    files, state = reference
    recs = [json.loads(x) for x in files["records"].decode().splitlines()]
    assert [r["line"] for r in recs] == [x for x in ITEMS if x % 2]
    assert [r["v"] for r in recs] == [x * x for x in ITEMS if x % 2]
    assert files["rejects"].decode().count("\n") == len([x for x in ITEMS if x % 3 == 0])
    assert state["done"] and state["chunks_done"] == 5
    assert state["counts"] == {"items": 23, "odd": 12}


@pytest.mark.parametrize(
    ("point", "n"),
    [
        ("after_append", 1),  # rows appended, progress not written
        ("after_append", 5),  # the last chunk appended, progress not written
        ("after_progress", 3),  # between chunks
        ("after_progress", 5),  # every chunk recorded, nothing renamed
        ("before_finish", 1),
        ("after_rename:records", 1),  # one stream renamed, the other not
        ("after_rename:rejects", 1),  # both renamed, done not recorded
    ],
)
def test_crash_at_every_point_then_resume_is_byte_identical(tmp_path, reference, fault, point, n):
    Crash = fault(point, n)
    out = tmp_path / "crashed"
    with pytest.raises(Crash):
        _run(out)
    assert fault.hits[point] == n  # the crash landed where asked
    shards.FAULT = None
    state = _run(out)
    files, ref_state = reference
    assert _files(out) == files
    assert state["counts"] == ref_state["counts"] and state["done"]
    assert not list(out.glob("*.partial"))


def test_issue_8_crafted_state_keeps_the_corpus(tmp_path, reference):
    """Finish a shard, move its rejects back to ``.partial``, mark it not done, rerun: the old
    runner recreated an empty ``.partial``, padded it with NUL bytes to the recorded size and
    renamed it over the finished corpus."""
    out = tmp_path / "s"
    _run(out)
    sh = Shard()
    rej = stream_path(out, sh, "rejects")
    os.replace(rej, rej.with_name(rej.name + ".partial"))
    prog = out / f"{sh.name}.progress.json"
    state = json.loads(prog.read_text())
    state["done"] = False
    prog.write_text(json.dumps(state))
    _run(out)
    assert _files(out) == reference[0]
    assert b"\0" not in stream_path(out, sh, "records").read_bytes()


def test_done_but_a_final_file_missing_is_finished_from_its_partial(tmp_path, reference):
    out = tmp_path / "s"
    _run(out)
    rec = stream_path(out, Shard(), "records")
    os.replace(rec, rec.with_name(rec.name + ".partial"))
    _run(out)
    assert _files(out) == reference[0]


def test_a_file_shorter_than_its_record_is_an_error_not_padding(tmp_path):
    out = tmp_path / "s"
    _run(out)
    rec = stream_path(out, Shard(), "records")
    prog = out / f"{Shard().name}.progress.json"
    state = json.loads(prog.read_text())
    state["done"] = False
    prog.write_text(json.dumps(state))
    rec.write_bytes(rec.read_bytes()[:10])
    with pytest.raises(ShardError, match="fewer than"):
        _run(out)


def test_a_shard_refuses_to_resume_with_other_settings(tmp_path):
    _run(tmp_path, settings={"v": 1})
    with pytest.raises(ShardError, match="other settings"):
        _run(tmp_path, settings={"v": 2})


def test_skips_are_counted_once_across_a_resume(tmp_path, fault):
    """Reader skips (including ones after the last item) are stored with their chunk."""

    def reading(skips):
        for x in [*ITEMS, "bad-tail"]:
            if isinstance(x, str) or x % 7 == 0:
                skips.skip("bad item", "f", 0)
                continue
            yield x

    ref_skips = SkipLog("skip")
    ref = _run(tmp_path / "ref", items=reading(ref_skips), skips=ref_skips)
    Crash = fault("after_progress", 2)
    with pytest.raises(Crash):
        s = SkipLog("skip")
        _run(tmp_path / "b", items=reading(s), skips=s)
    shards.FAULT = None
    s = SkipLog("skip")
    state = _run(tmp_path / "b", items=reading(s), skips=s)
    expect = {"skip:bad item": 4}  # 7, 14, 21 and the trailing bad line
    assert shards.total_counts(ref) == shards.total_counts(state)
    assert {k: v for k, v in shards.total_counts(state).items() if k.startswith("skip")} == expect


def test_sharded_merge_equals_unsharded_in_input_order(tmp_path, reference):
    for i in range(3):
        _run(tmp_path / "three", shard=Shard(i, 3))
    outs = {s: tmp_path / f"merged.{s}.jsonl" for s in STREAMS}
    totals = merge_streams(tmp_path / "three", outs, order_key="line")
    assert {s: p.read_bytes() for s, p in outs.items()} == reference[0]
    assert totals == Counter(reference[1]["counts"])
    rows = list(merged_rows(tmp_path / "three", "records", order_key="line"))
    assert [r["line"] for r in rows] == [x for x in ITEMS if x % 2]


def test_merge_refusals(tmp_path):
    _run(tmp_path / "a", shard=Shard(0, 2))
    with pytest.raises(ShardError, match=r"shards \[1\] of 2 are missing or unfinished"):
        shard_states(tmp_path / "a")
    _run(tmp_path / "a", shard=Shard(0, 3))
    with pytest.raises(ShardError, match="mixes shard counts"):
        shard_states(tmp_path / "a")
    _run(tmp_path / "b", shard=Shard(0, 2), settings={"v": 1})
    _run(tmp_path / "b", shard=Shard(1, 2), settings={"v": 2})
    with pytest.raises(ShardError, match="different settings"):
        shard_states(tmp_path / "b")
    with pytest.raises(ShardError, match="not 4"):
        shard_states(tmp_path / "b", num_shards=4)
    with pytest.raises(ShardError, match="no shards"):
        shard_states(tmp_path / "empty")


def test_bad_shard_numbers():
    with pytest.raises(ShardError):
        Shard(2, 2)
    with pytest.raises(ShardError):
        Shard(0, 0)
