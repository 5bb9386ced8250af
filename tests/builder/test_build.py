"""The corpus builder on real gold AMR graphs with the rule-based generator: stages, rejects,
sharding + merge, and byte-for-byte resume after kill -9."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paraamr.builder.inputs import Item, read_items
from paraamr.builder.pipeline import BuildConfig, Builder, BuildError, build_shard, merge_build
from paraamr.errors import ParaAMRError
from paraamr.testing.fakes import ConceptGenerator

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def little_prince(data_dir, tmp_path_factory):
    """The first 120 Little Prince gold graphs as a PENMAN file."""
    src = (data_dir / "amr" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    blocks = [b for b in src.split("\n\n") if "::snt" in b][:120]
    p = tmp_path_factory.mktemp("lp") / "lp.amr"
    p.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return p


def builder(**kw):
    return Builder(
        generator=ConceptGenerator(), cfg=BuildConfig(chunk_size=8, **kw), source="lp.amr"
    )


def test_gold_graphs_to_records(little_prince, tmp_path):
    state = build_shard(builder(keep_graphs=True), little_prince, tmp_path, progress=False)
    recs = [
        json.loads(x)
        for x in (tmp_path / "shard-00000-of-00001.records.jsonl").read_text().splitlines()
    ]
    rejects = (tmp_path / "shard-00000-of-00001.rejects.jsonl").read_text().splitlines()
    c = state["counts"]
    assert c["items"] == 120 and c["records"] + c["rejects"] == 120
    assert len(recs) == c["records"] > 80 and len(rejects) == c["rejects"]
    for r in recs:
        assert r["paraphrases"] and all(
            p["para_text"] == p["para_text"].lower() for p in r["paraphrases"]
        )
        assert len({p["para_text"] for p in r["paraphrases"]}) == len(r["paraphrases"])
        assert all(p["focus"] and p["amr"].startswith(f"({p['focus']} ") for p in r["paraphrases"])
    for line in rejects:
        j = json.loads(line)
        assert (
            j["stage"] in {"input", "parse", "refocus", "generate", "postprocess"} and j["reason"]
        )


def test_bad_inputs_are_rejected_with_reasons(tmp_path):
    p = tmp_path / "in.amr"
    p.write_text(
        "# ::snt The boy wants to go.\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))\n\n"
        "# ::snt Broken.\n(x / broken :ARG0 (y\n\n"
        "# ::snt One node.\n(o / one)\n\n"
        "(n / no-sentence :ARG0 (m / metadata))\n",
        encoding="utf-8",
    )
    state = build_shard(builder(), p, tmp_path / "out", input_format="penman", progress=False)
    rej = [
        json.loads(x)
        for x in (tmp_path / "out" / "shard-00000-of-00001.rejects.jsonl").read_text().splitlines()
    ]
    assert state["counts"]["items"] == 4 and state["counts"]["records"] == 1
    assert sorted(r["stage"] for r in rej) == ["input", "input", "refocus"]
    by_line = {r["line"]: r["reason"] for r in rej}
    assert "malformed PENMAN" in by_line[4] and "::snt" in by_line[10]
    assert "no candidate focus under focus.policy=all (1-node graph)" in by_line[7]


def test_generator_failure_is_isolated(tmp_path):
    items = [
        Item(
            1,
            "The boy wants to go.",
            graph="(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
        ),
        Item(2, "It exploded.", graph="(e / explode-01 :ARG1 (i / it) :time (n / now))"),
    ]
    b = Builder(generator=ConceptGenerator(fail_on="explode"), cfg=BuildConfig())
    recs, rejects, counts = b.process_chunk(items)
    assert [r["line"] for r in recs] == [1]
    assert rejects[0]["line"] == 2 and rejects[0]["stage"] == "generate"
    with pytest.raises(BuildError, match=r"<input>:2: generate"):
        Builder(
            generator=ConceptGenerator(fail_on="explode"), cfg=BuildConfig(on_error="raise")
        ).process_chunk(
            [Item(2, "It exploded.", graph="(e / explode-01 :ARG1 (i / it) :time (n / now))")]
        )


def test_one_failing_graph_costs_a_few_halved_calls_not_one_call_per_graph():
    """A chunk of 64 sources, one of them a graph the generator fails on: the batch is halved
    until each of its foci stands alone (at most 1 + 2 calls per halving per bad focus; one by
    one: 1 + one per focus), and every other source gets what a generator that never fails
    gives it."""
    good = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :time (t / today)))"
    items = [Item(i, f"Sentence {i}.", graph=good.replace("today", f"day-{i}"))
             for i in range(1, 65)]  # fmt: skip
    items[40] = Item(41, "It exploded.", graph="(e / explode-01 :ARG1 (i / it) :time (n / now))")

    class Counting(ConceptGenerator):
        def __init__(self, fail_on=None):
            super().__init__(fail_on)
            self.sizes: list[int] = []

        def generate(self, graphs):
            self.sizes.append(len(graphs))
            return super().generate(graphs)

    gen, ok = Counting(fail_on="explode"), Counting()
    recs, rejects, counts = Builder(gen, cfg=BuildConfig()).process_chunk(items)
    want, _, _ = Builder(ok, cfg=BuildConfig()).process_chunk(items[:40] + items[41:])
    assert [r["line"] for r in rejects] == [41] and rejects[0]["stage"] == "generate"
    assert recs == want
    bad = gen.sizes[0] - ok.sizes[0]  # the bad source's foci
    assert counts["generate_failed"] == bad >= 2
    halvings = math.ceil(math.log2(gen.sizes[0]))  # 191 foci: 8
    assert len(gen.sizes) <= 1 + 2 * halvings * bad < 1 + gen.sizes[0], gen.sizes


def test_a_lone_failing_graph_is_tried_once_and_never_split_into_nothing():
    """One graph that fails: one call, ``None``, counted; never a call on an empty half (a
    generator may refuse an empty batch)."""
    from collections import Counter

    class Strict(ConceptGenerator):
        sizes: list[int] = []

        def generate(self, graphs):
            Strict.sizes.append(len(graphs))
            if not graphs:
                raise ValueError("an empty batch")
            return super().generate(graphs)

    counts: Counter = Counter()
    builder = Builder(Strict(fail_on="explode"), cfg=BuildConfig())
    assert builder._generate(["(e / explode-01 :ARG1 (i / it))"], counts) == [None]
    assert counts["generate_failed"] == 1 and Strict.sizes == [1]


def test_sentence_input_rejects_empty_and_overlong(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("\n" + " ".join(["word"] * 150) + "\n", encoding="utf-8")
    items = list(read_items(p))
    recs, rejects, _ = Builder(generator=ConceptGenerator(), cfg=BuildConfig()).process_chunk(items)
    assert recs == [] and [r["stage"] for r in rejects] == ["input", "input"]
    assert "empty" in rejects[0]["reason"] and "too long" in rejects[1]["reason"]


def test_shards_merge_to_the_unsharded_corpus(little_prince, tmp_path):
    build_shard(builder(), little_prince, tmp_path / "one", progress=False)
    merge_build(tmp_path / "one", 1, tmp_path / "one.jsonl")
    for i in range(3):
        build_shard(
            builder(), little_prince, tmp_path / "three", shard=i, num_shards=3, progress=False
        )
    merge_build(tmp_path / "three", 3, tmp_path / "three.jsonl")
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "three.jsonl").read_bytes()
    assert (tmp_path / "one.rejects.jsonl").read_bytes() == (
        tmp_path / "three.rejects.jsonl"
    ).read_bytes()


def test_merge_refuses_unfinished_shards(little_prince, tmp_path):
    build_shard(builder(), little_prince, tmp_path, shard=0, num_shards=2, progress=False)
    with pytest.raises(ParaAMRError, match="missing or unfinished"):
        merge_build(tmp_path, 2, tmp_path / "c.jsonl")


def test_random_k_is_deterministic(little_prince, tmp_path):
    for d in ("a", "b"):
        build_shard(
            builder(focus_policy="random_k", focus_k=2, seed=3),
            little_prince,
            tmp_path / d,
            progress=False,
        )
    a = (tmp_path / "a" / "shard-00000-of-00001.records.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "shard-00000-of-00001.records.jsonl").read_bytes()
    rows = [json.loads(x) for x in a.decode().splitlines()]
    assert rows and all(len(r["paraphrases"]) <= 2 for r in rows)  # k took effect
    build_shard(builder(), little_prince, tmp_path / "all", progress=False)
    assert a != (tmp_path / "all" / "shard-00000-of-00001.records.jsonl").read_bytes()


def test_bad_focus_settings_fail_at_configuration():
    with pytest.raises(ValueError, match="unknown policy"):
        BuildConfig(focus_policy="rnd")
    with pytest.raises(ValueError, match="only applies"):
        BuildConfig(focus_k=3)


def test_gold_graphs_are_read_with_the_amr_model():
    """``:consist-of`` is a role in AMR, not an inverted ``:consist``; penman's default model
    would invert it."""
    g = "(t / team :consist-of (p / person))"
    b = Builder(generator=ConceptGenerator(), cfg=BuildConfig(keep_graphs=True))
    recs, _, _ = b.process_chunk([Item(1, "A team of people.", graph=g)])
    assert recs[0]["paraphrases"][0]["amr"] == "(p / person :consist-of-of (t / team))"


def _build_cmd(inp, out, *extra, tiny_dir=None):
    """The builder's Hydra entry point, run through the fault-injection wrapper."""
    models = (
        ["+experiment=build_tiny", "stog=none", "input_format=penman", f"tiny_dir={tiny_dir}"]
        if tiny_dir
        else [
            "+experiment=build_gold_amr",
            "~generator",
            "+generator._target_=paraamr.testing.fakes.ConceptGenerator",
            "lm=none",
        ]
    )
    return [
        sys.executable,
        "-m",
        "paraamr.testing.faults",
        "experiments/build.py",
        f"input={inp}",
        f"out_dir={out}",
        *models,
        "chunk_size=2",
        "progress=false",
        "hydra.run.dir=" + str(out) + "/hydra",
        *extra,
    ]


def _state(out):
    p = out / "shard-00000-of-00001.progress.json"
    return json.loads(p.read_text()) if p.exists() else None


def _run_until(cmd, env, out, *, fault=None, kill_at=None):
    """Run the builder; with ``fault`` it kills itself there (``paraamr.testing.faults``); with
    ``kill_at`` it gets SIGKILL from here once ``chunks_done >= kill_at``. Returns the exit code."""
    env = {**env, **({"PARAAMR_FAULT": fault} if fault else {})}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    deadline = time.time() + 300
    while kill_at is not None and time.time() < deadline and proc.poll() is None:
        try:
            if (
                json.loads((out / "shard-00000-of-00001.progress.json").read_text())["chunks_done"]
                >= kill_at
            ):
                os.kill(proc.pid, signal.SIGKILL)
                break
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass  # not written yet / being replaced: poll again
        time.sleep(0.002)
    return proc.wait(timeout=300)


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from paraamr.testing.tiny_models import build_tiny_causal_lm, build_tiny_gtos

    d = tmp_path_factory.mktemp("tiny")
    build_tiny_gtos(d / "gtos")
    build_tiny_causal_lm(d / "lm")
    return d


@pytest.mark.slow
@pytest.mark.parametrize("models", ["concept-generator", "tiny-amrlib-gtos+tiny-gpt2"])
def test_kill_9_and_resume_is_byte_identical(little_prince, tmp_path, models, request):
    """Kills that land mid-run (counted, >= 3): one injected between a chunk's append and its
    progress write, one right after a progress write, external ``kill -9`` at moments seen from
    outside; then one inside the finishing renames. Every run has another PYTHONHASHSEED."""
    tiny = request.getfixturevalue("tiny_models") if models.startswith("tiny") else None
    inp, n_external = little_prince, 2
    if tiny:  # the tiny models are slow on 2 shared cores: 16 graphs (8 chunks), 1 external kill
        inp, n_external = tmp_path / "lp16.amr", 1
        inp.write_text("\n\n".join(little_prince.read_text().split("\n\n")[:16]) + "\n")
    seeds = iter(range(100))
    env = lambda: {**os.environ, "PYTHONHASHSEED": str(next(seeds))}  # noqa: E731
    ref, out = tmp_path / "ref", tmp_path / "killed"
    assert _run_until(_build_cmd(inp, ref, tiny_dir=tiny), env(), ref) == 0
    total = _state(ref)["chunks_done"]
    assert total >= 8
    cmd = _build_cmd(inp, out, tiny_dir=tiny)
    part = out / "shard-00000-of-00001.records.jsonl.partial"
    landed = 0

    # injected: killed after the 2nd chunk's rows were appended, before its progress write
    assert _run_until(cmd, env(), out, fault="after_append:2") == -signal.SIGKILL
    st = _state(out)
    assert st["chunks_done"] == 1 and not st["done"]
    assert part.stat().st_size > st["sizes"]["records"]  # rows on disk the record doesn't know
    landed += 1

    # external kill -9 at a moment seen from outside (those that land mid-run; at most 6 tries)
    for _ in range(6):
        if landed == 1 + n_external:
            break
        before = _state(out)["chunks_done"]
        rc = _run_until(cmd, env(), out, kill_at=before + 2)
        st = _state(out)
        assert not st["done"], "the run finished before the kill: nothing left to kill"
        if rc == -signal.SIGKILL and before < st["chunks_done"] < total:
            landed += 1
    assert landed == 1 + n_external

    # injected: killed right after a progress write (between two chunks)
    before = _state(out)["chunks_done"]
    assert _run_until(cmd, env(), out, fault="after_progress:1") == -signal.SIGKILL
    assert _state(out)["chunks_done"] == before + 1 < total
    landed += 1
    assert landed >= 3

    # injected inside finishing: records renamed into place, rejects not yet, done not recorded
    assert _run_until(cmd, env(), out, fault="after_rename:records") == -signal.SIGKILL
    st = _state(out)
    assert st["chunks_done"] == total and not st["done"]
    assert (out / "shard-00000-of-00001.rejects.jsonl.partial").exists()

    assert _run_until(cmd, env(), out) == 0 and _state(out)["done"]
    for name in ("corpus.jsonl", "corpus.rejects.jsonl"):
        assert (out / name).read_bytes() == (ref / name).read_bytes()
    ref_counts = json.loads((ref / "build_summary.json").read_text())["counts"]
    assert json.loads((out / "build_summary.json").read_text())["counts"] == ref_counts
    if tiny:  # the real (tiny) LM scored every paraphrase
        rows = [json.loads(x) for x in (ref / "corpus.jsonl").read_text().splitlines()]
        ppl = [p["perplexity"] for r in rows for p in r["paraphrases"]]
        assert ppl and all(isinstance(v, float) and v > 1 for v in ppl)


def test_build_demo_says_what_its_text_is_worth(tmp_path, data_dir):
    from paraamr.builder.demo import run_demo

    md = run_demo(str(tmp_path), generator="concepts", n_graphs=6, data_dir=str(data_dir))
    text = md.read_text()
    assert "NOT PARAPHRASES" in text and "focus `" in text
    assert (tmp_path / "corpus.jsonl").read_text().count("\n") >= 4


@pytest.mark.slow
def test_submitit_local_job_array_then_merge(little_prince, tmp_path):
    out = tmp_path / "arr"
    cmd = _build_cmd(little_prince, out)[3:-1] + ["limit=10"]  # without the fault wrapper
    subprocess.run(
        [sys.executable, cmd[0]]
        + [
            "-m",
            "hydra/launcher=submitit_local",
            "num_shards=2",
            "shard=0,1",
            "merge=false",
            f"hydra.sweep.dir={out}/sweep",
            *cmd[1:],
        ],
        cwd=ROOT,
        check=True,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "paraamr.cli",
            "build-merge",
            "--out",
            str(out),
            "--num-shards",
            "2",
        ],
        cwd=ROOT,
        check=True,
    )
    lines = [json.loads(x)["line"] for x in (out / "corpus.jsonl").read_text().splitlines()]
    assert lines == sorted(lines) and len(lines) > 10


class _Crash(Exception):
    pass


def test_resume_refuses_other_settings_and_finishes_with_the_same(
    little_prince, tmp_path, monkeypatch
):
    import paraamr.shards
    from paraamr.shards import ShardError
    from paraamr.testing.faults import make_hook

    def crash(point):
        raise _Crash(point)

    build_shard(builder(), little_prince, tmp_path / "ref", progress=False)
    monkeypatch.setattr(paraamr.shards, "FAULT", make_hook("after_progress:3", crash))
    with pytest.raises(_Crash):
        build_shard(builder(), little_prince, tmp_path / "out", progress=False)
    monkeypatch.setattr(paraamr.shards, "FAULT", None)
    prog = tmp_path / "out" / "shard-00000-of-00001.progress.json"
    recorded = prog.read_bytes()
    for other in (builder(focus_policy="no_incoming"), builder(lowercase=False), builder(seed=1)):
        with pytest.raises(ShardError, match="was written with other settings"):
            build_shard(other, little_prince, tmp_path / "out", progress=False)
    with pytest.raises(ShardError, match="other settings"):
        build_shard(builder(), little_prince, tmp_path / "out", limit=50, progress=False)
    assert prog.read_bytes() == recorded  # a refused resume leaves the shard as it was
    build_shard(builder(), little_prince, tmp_path / "out", progress=False)
    for stream in ("records", "rejects"):
        name = f"shard-00000-of-00001.{stream}.jsonl"
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()


def test_policy_top_generates_from_the_graph_as_parsed_only():
    """``focus.policy=top``: one paraphrase per source, from the original top (the AMR round
    trip without re-focusing), against one per other concept for ``all``."""
    g = "(s / see-01 :ARG0 (i / i) :ARG1 (p / picture :mod (m / magnificent)))"
    top = Builder(generator=ConceptGenerator(), cfg=BuildConfig(focus_policy="top",
                                                               keep_graphs=True))  # fmt: skip
    recs, _, _ = top.process_chunk([Item(1, "I saw a magnificent picture.", graph=g)])
    assert [p["amr"] for p in recs[0]["paraphrases"]] == [g]
    every = Builder(generator=ConceptGenerator(), cfg=BuildConfig(keep_graphs=True))
    recs, _, _ = every.process_chunk([Item(1, "I saw a magnificent picture.", graph=g)])
    assert len(recs[0]["paraphrases"]) == 3
