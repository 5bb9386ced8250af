"""The corpus builder on real gold AMR graphs with the rule-based generator: stages, rejects,
sharding + merge, and byte-for-byte resume after kill -9."""

import json
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

ROOT = Path(__file__).resolve().parents[1]


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
    assert "no candidate focus" in by_line[7]


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


def _build_cmd(inp, out):
    return [
        sys.executable,
        "experiments/build.py",
        f"input={inp}",
        f"out_dir={out}",
        "+experiment=build_gold_amr",
        "~generator",
        "+generator._target_=paraamr.testing.fakes.ConceptGenerator",
        "lm=none",
        "chunk_size=2",
        "progress=false",
        "hydra.run.dir=" + str(out) + "/hydra",
    ]


@pytest.mark.slow
def test_kill_9_and_resume_is_byte_identical(little_prince, tmp_path):
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(_build_cmd(little_prince, tmp_path / "ref"), cwd=ROOT, env=env, check=True)
    out = tmp_path / "killed"
    prog = out / "shard-00000-of-00001.progress.json"
    for target in (3, 15, 40):  # kill three times at different points
        proc = subprocess.Popen(_build_cmd(little_prince, out), cwd=ROOT, env=env)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                if json.loads(prog.read_text())["chunks_done"] >= target:
                    break
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                pass
            time.sleep(0.005)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    subprocess.run(_build_cmd(little_prince, out), cwd=ROOT, env=env, check=True)
    for name in ("corpus.jsonl", "corpus.rejects.jsonl"):
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()


def test_build_demo_says_what_its_text_is_worth(tmp_path, data_dir):
    from paraamr.builder.demo import run_demo

    md = run_demo(str(tmp_path), generator="concepts", n_graphs=6, data_dir=str(data_dir))
    text = md.read_text()
    assert "NOT PARAPHRASES" in text and "focus `" in text
    assert (tmp_path / "corpus.jsonl").read_text().count("\n") >= 4


@pytest.mark.slow
def test_submitit_local_job_array_then_merge(little_prince, tmp_path):
    out = tmp_path / "arr"
    cmd = _build_cmd(little_prince, out)[:-1] + ["limit=10"]
    subprocess.run(
        cmd[:2]
        + [
            "-m",
            "hydra/launcher=submitit_local",
            "num_shards=2",
            "shard=0,1",
            "merge=false",
            f"hydra.sweep.dir={out}/sweep",
            *cmd[2:],
        ],
        cwd=ROOT,
        check=True,
    )
    subprocess.run(
        [sys.executable, "-m", "paraamr.builder", "merge", "--out", str(out), "--num-shards", "2"],
        cwd=ROOT,
        check=True,
    )
    lines = [json.loads(x)["line"] for x in (out / "corpus.jsonl").read_text().splitlines()]
    assert lines == sorted(lines) and len(lines) > 10
