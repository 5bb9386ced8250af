"""The AMR models trained here (paraamr.amrlm): the fixed split, the pairs, decoding that can
only write balanced graphs (on an untrained tiny GPT-2, whose answers are noise), the trainer
end to end on the tiny model, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from paraamr.amrlm.split import PARTS, load_split
from paraamr.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _depths(text: str) -> tuple[int, int]:
    """(final depth, lowest running depth) of the brackets of ``text``, counted by hand."""
    d = low = 0
    for ch in text:
        d += (ch == "(") - (ch == ")")
        low = min(low, d)
    return d, low


def test_the_split_covers_every_graph_once_in_its_documented_sizes(data_dir):
    parts = {p: load_split(data_dir, p) for p in ("train", "dev", "test")}
    assert {p: len(v) for p, v in parts.items()} == {"train": 1674, "dev": 195, "test": 193}
    ids = [e.id for v in parts.values() for e in v]
    assert len(ids) == len(set(ids)) == 2062
    assert parts["test"][0].id == "lpp_1943.1420" and parts["dev"][0].id == "lpp_1943.1275"
    for file in {p.file for p in PARTS}:  # contiguous, in file order, no gap
        spans = sorted((p.start, p.stop) for p in PARTS if p.file == file)
        assert [a for a, _ in spans[1:]] == [b for _, b in spans[:-1]] and spans[0][0] == 0


def test_a_file_of_another_size_is_refused(data_dir, tmp_path):
    from paraamr.errors import InputError

    (tmp_path / "amr").mkdir()
    text = (data_dir / "amr" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    (tmp_path / "amr" / "amr-bank-struct-v3.0.txt").write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match="graphs, the split expects 1562"):
        load_split(tmp_path, "train")


def test_generator_pairs_with_refocused_copies_start_from_other_concepts(data_dir):
    from paraamr.amrlm.data import generate_pairs, parse_pairs

    ex = load_split(data_dir, "train", limit=20)
    items = [(e.sentence, e.graph) for e in ex]
    plain = generate_pairs(items)
    more = generate_pairs(items, refocus_copies=2, seed=0)
    assert [t for _, t in plain] == [e.sentence for e in ex]
    assert len(more) > len(plain) and {t for _, t in more} == {t for _, t in plain}
    big = max(ex, key=lambda e: len(e.graph.instances()))
    tops = [p.split()[1] for p, t in more if t == big.sentence]
    assert len(tops) == 3 and len(set(tops)) == 3  # the copies begin with other concepts
    assert parse_pairs(items)[0] == (ex[0].sentence, plain[0][0])


@pytest.mark.parametrize("limit", [12, 40])
def test_constrained_answers_are_balanced_graphs_even_from_noise(tiny_gpt2, data_dir, limit):
    from paraamr.amrlm.module import AMRModule

    sentences = [e.sentence for e in load_split(data_dir, "test", limit=6)]
    free = AMRModule(model_name_or_path=str(tiny_gpt2), arch="causal", max_source_length=24,
                     max_target_length=limit, constrained=False)  # fmt: skip
    held = AMRModule(model_name_or_path=str(tiny_gpt2), arch="causal", max_source_length=24,
                     max_target_length=limit, max_depth=3)  # fmt: skip
    unbalanced = [a for a in free.generate(sentences) if _depths(a) != (0, 0) or a[:1] != "("]
    assert unbalanced  # the untrained model alone writes no graphs
    for answer in held.generate(sentences):
        depth, low = _depths(answer)
        assert answer.startswith("(") and depth == 0 and low == 0, answer
        running = 0
        for ch in answer:
            running += (ch == "(") - (ch == ")")
            assert running <= 3
        assert answer.rstrip().endswith(")")


def test_the_trainer_writes_both_models_scores_and_outputs(train_amr, tmp_path, data_dir, caplog,
                                                          monkeypatch):  # fmt: skip
    import logging

    import paraamr.lms.answers as answers_module
    from paraamr.amrlm.module import AMRModule
    from paraamr.signature import Signature

    batches = []  # the batch size of each scoring pass, as the decoding gets it
    real = answers_module.map_length_batches
    monkeypatch.setattr(
        answers_module,
        "map_length_batches",
        lambda items, fn, size: batches.append(size) or real(items, fn, size),
    )
    caplog.set_level(logging.INFO)
    result = train_amr(tmp_path, "data.group_by_length=true")
    # the parser in the builder's batches of 64, the generator (both passes) in 16
    assert batches == [64, 16, 16]
    assert not [r for r in caplog.records if r.name.startswith("penman")]  # no line per graph
    saved = json.loads((tmp_path / "scores.json").read_text())
    assert saved["split"] == {"train": 8, "dev": 4, "test": 4} == result["split"]
    parse, gen = saved["directions"]["parse"], saved["directions"]["generate"]
    assert parse["pairs"] == gen["pairs"] == 4 and parse["train"]["steps"] == 2
    assert 0.0 <= parse["f1"] <= 1.0 and parse["deserialized"] + parse["rejects"] == 4
    assert Signature(parse["signature"]).fields["amr"] == "parse"
    assert Signature(gen["signature"]).fields["metric"] == "sacrebleu+cos(minilm)"
    assert Signature(parse["signature"]).fields["grouped"] == "True"  # batches by length
    lines = (tmp_path / "parser" / "test_outputs.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines][:2] == ["lpp_1943.1420", "lpp_1943.1421"]
    # the generator is also scored from a re-focused copy of each graph: another concept on top
    rows = [json.loads(x) for x in (tmp_path / "generator" / "test_outputs.jsonl").open()]
    tops = {e.id: e.graph.top for e in load_split(data_dir, "test", limit=2)}
    moved = [r for r in rows if "focus" in r]
    assert moved and all(r["focus"] != tops[r["id"]] for r in moved)
    assert gen["refocused"]["pairs"] == len(moved) <= 4 and 0 <= gen["refocused"]["cosine"] <= 1
    back = AMRModule.from_saved(tmp_path / "parser" / "model")
    assert back.settings["direction"] == "parse" and back.settings["constrained"]
    assert AMRModule.from_saved(tmp_path / "generator" / "model").settings["direction"] == (
        "generate"
    )
    assert (tmp_path / "parser" / "curves.png").exists()
    # a finished direction is reused, not retrained
    stamp = (tmp_path / "parser" / "model" / "amr_module.json").stat().st_mtime_ns
    assert Signature(parse["signature"]).fields["cap"] == "7x10"  # the default budget
    assert "precision" not in Signature(parse["signature"]).fields  # fp32 keeps its old name
    batches.clear()
    train_amr(tmp_path, "directions=[parse]", "model.answer_cap=null", "eval.dtype=bf16",
              "stages.parser.eval.batch_size=3")  # fmt: skip
    assert batches == [3]
    assert (tmp_path / "parser" / "model" / "amr_module.json").stat().st_mtime_ns == stamp
    again = json.loads((tmp_path / "scores.json").read_text())["directions"]
    assert sorted(again) == ["generate", "parse"]  # the other direction's entry is kept
    fields = Signature(again["parse"]["signature"]).fields
    assert fields["cap"] == "none" and fields["precision"] == "bf16"  # re-scored
    assert again["parse"]["eval_batch_size"] == 3 and again["generate"]["eval_batch_size"] == 16
    # re-scoring under other training settings is refused: the signature would name them
    with pytest.raises(ConfigError, match=r"trained with other settings.*'max_steps': \(2, 3\)"):
        train_amr(tmp_path, "directions=[parse]", "stages.parser.trainer.max_steps=3")
    with pytest.raises(ConfigError, match=r"'loss_norm': \('corpus', 'batch'\)"):
        train_amr(tmp_path, "directions=[generate]", "data.loss_norm=batch")


def test_the_corpus_loss_norm_reaches_the_trainer_and_the_signature(
    train_amr, tmp_path, data_dir, monkeypatch
):
    from paraamr.amrlm.data import pairs_for
    from paraamr.amrlm.module import AMRModule
    from paraamr.signature import Signature
    from paraamr.training.condgen import CondGenModule
    from paraamr.training.recipe import mean_answer_tokens

    seen = []
    real = CondGenModule.training_step
    monkeypatch.setattr(
        CondGenModule,
        "training_step",
        lambda self, b, i: seen.append(self.loss_tokens) or real(self, b, i),
    )
    result = train_amr(tmp_path, "directions=[parse]", "data.loss_norm=corpus",
                       "data.batch_size=2")  # fmt: skip
    assert Signature(result["directions"]["parse"]["signature"]).fields["loss"] == "corpus"
    module = AMRModule.from_saved(tmp_path / "parser" / "model")
    train = load_split(data_dir, "train", 4)
    pairs = pairs_for("parse", [(e.sentence, e.graph) for e in train])
    assert len(seen) == 2 and set(seen) == {2 * mean_answer_tokens(pairs, module.encode_batch)}


def _cli(*args, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "paraamr.cli", "amr", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=300)  # fmt: skip


def test_the_parser_reads_whole_sentences_past_its_training_length(train_amr, tmp_path):
    """``stog.read_tokens``: the prompt holds every token of a sentence longer than the
    training length (counted here with the tokenizer, word by word), the builder's parser counts
    the sentences it cuts, and the signature names a read limit other than the trained one."""
    from paraamr.builder.models import TrainedStog

    train_amr(tmp_path)
    long = " ".join(["the little prince smiled"] * 4) + " ."
    trained = TrainedStog(str(tmp_path), read_tokens=None)
    whole = TrainedStog(str(tmp_path), read_tokens=256)
    tok = whole.module.tokenizer
    n = sum(len(tok(" " + w, add_special_tokens=False)["input_ids"]) for w in long.split())
    # the tiny model's positions leave room for fewer than 256 source tokens beside its answers
    room = whole.module.model.config.n_positions - whole.module.settings["max_target_length"] - 1
    assert whole.read_tokens == min(256, room) and trained.read_tokens == 32 < n <= room
    assert trained.cut([long, "He left ."]) == 1 and whole.cut([long, "He left ."]) == 0
    sep = len(tok("\n", add_special_tokens=False)["input_ids"])
    assert whole.module._causal_batch([long], None)["input_ids"].shape[1] == n + sep
    assert trained.module._causal_batch([long], None)["input_ids"].shape[1] == 32 + sep
    assert whole.signature().endswith(f",reads={whole.read_tokens})")
    assert ",reads=" not in trained.signature()
    with pytest.raises(ConfigError, match="stog.read_tokens must be a whole number"):
        TrainedStog(str(tmp_path), read_tokens=0)


def test_the_command_line_keeps_lines_aligned_and_counts_failures(train_amr, tmp_path):
    train_amr(tmp_path)
    r = _cli("parse", "--model", str(tmp_path), stdin="He left .\n\nThe prince smiled .\n")
    assert r.returncode == 0, r.stderr
    blocks = r.stdout.strip().split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        "# ::snt He left .", "# ::snt", "# ::snt The prince smiled ."
    ]  # fmt: skip
    assert blocks[1].splitlines()[1] == "(e / amr-empty)" and "1 empty" in r.stderr
    assert "longer than the model reads" not in r.stderr
    long = " ".join(["the little prince smiled"] * 20) + " ."  # 81 words > 32 tokens trained
    r2 = _cli("parse", "--model", str(tmp_path), "--progress", "--read-tokens", "32",
              stdin=f"He left .\n{long}\n")  # fmt: skip
    assert r2.returncode == 0 and len(r2.stdout.strip().split("\n\n")) == 2
    assert "1 of 2 sentences are longer than the model reads (32 tokens)" in r2.stderr
    # by default it reads all its positions allow (at most 256 tokens): fewer are cut
    whole = _cli("parse", "--model", str(tmp_path), stdin=f"{long}\nHe left .\n")
    assert whole.returncode == 0 and "longer than the model reads (32" not in whole.stderr
    assert "2/2" in r2.stderr and "2/2" not in r.stderr  # the bar only when asked for
    out = tmp_path / "g.amr"
    r3 = _cli("parse", "--model", str(tmp_path), "--output", str(out),
              stdin="He left .\n\nThe prince smiled .\n")  # fmt: skip
    assert r3.returncode == 0 and r3.stdout == "" and "1 empty" in r3.stderr
    assert out.read_text() == r.stdout.rstrip("\n") + "\n\n"  # the same blocks
    graphs = tmp_path / "g.txt"
    graphs.write_text(r.stdout + "\n# ::snt bad\n(a / b :ARG0\n")
    g = _cli("generate", "--model", str(tmp_path), "--input", str(graphs))
    assert g.returncode == 0 and len(g.stdout.split("\n")) == 5  # 4 sentences + the final \n
    assert g.stdout.split("\n")[3] == "" and "1 of 4 graphs do not decode" in g.stderr
    g = _cli("generate", "--model", str(tmp_path), "--input", str(graphs), "--on-error", "raise")
    assert g.returncode == 2 and g.stderr.strip().count("\n") == 0
    assert f"{graphs}:" in g.stderr and "Traceback" not in g.stderr


def test_num_beams_on_the_command_line_reaches_the_decoder(
    train_amr, tmp_path, monkeypatch, capsys
):
    from paraamr.amrlm.module import AMRModule
    from paraamr.cli import main

    train_amr(tmp_path)
    seen, decode = [], AMRModule.generate_ids

    def spy(self, batch, **kw):
        seen.append(kw["num_beams"])
        return decode(self, batch, **kw)

    monkeypatch.setattr(AMRModule, "generate_ids", spy)
    sentences = tmp_path / "s.txt"
    sentences.write_text("He left .\nThe prince smiled .\n")
    main(["amr", "parse", "--model", str(tmp_path), "--input", str(sentences), "--num-beams", "3"])
    graphs = capsys.readouterr().out
    assert seen == [3] and graphs.count("# ::snt") == 2
    for block in graphs.strip().split("\n\n"):
        assert _depths(block.splitlines()[1]) == (0, 0)  # beams stay inside the constraint
    (tmp_path / "g.txt").write_text(graphs)
    main(["amr", "generate", "--model", str(tmp_path), "--input", str(tmp_path / "g.txt")])
    main(["amr", "generate", "--model", str(tmp_path), "--input", str(tmp_path / "g.txt"),
          "--num-beams", "2"])  # fmt: skip
    assert seen == [3, 1, 2]  # without the option: the model's own setting (greedy)


def test_dtype_runs_the_decoding_on_bf16_weights(train_amr, tmp_path, monkeypatch, capsys):
    """``--dtype bf16`` (command line) and ``dtype`` (the builder's wrappers) run every decoding
    call on bf16 weights (on a CPU too: no autocast); the default runs fp32, and the signature
    names bf16 only."""
    import torch

    from paraamr.amrlm.module import AMRModule
    from paraamr.builder.models import TrainedGenerator, TrainedStog
    from paraamr.cli import main

    train_amr(tmp_path)
    seen, decode = [], AMRModule.generate_ids

    def spy(self, batch, **kw):
        assert not torch.is_autocast_enabled("cpu")
        seen.append(self.model.get_input_embeddings().weight.dtype)
        return decode(self, batch, **kw)

    monkeypatch.setattr(AMRModule, "generate_ids", spy)
    sentences = tmp_path / "s.txt"
    sentences.write_text("He left .\nThe prince smiled .\n")
    main(["amr", "parse", "--model", str(tmp_path), "--input", str(sentences), "--dtype", "bf16"])
    (tmp_path / "g.txt").write_text(capsys.readouterr().out)
    main(["amr", "generate", "--model", str(tmp_path), "--input", str(tmp_path / "g.txt")])
    assert seen == [torch.bfloat16, torch.float32]
    stog = TrainedStog(str(tmp_path), device="cpu", dtype="bf16")
    gen = TrainedGenerator(str(tmp_path), device="cpu")
    graphs = stog.parse(["He left ."])
    gen.generate([g for g in graphs if g] or ["(l / leave-11 :ARG0 (h / he))"])
    assert seen[2:] == [torch.bfloat16, torch.float32]
    assert stog.signature() == f"amrlm-parser({tmp_path.name},cap=7x10,bf16)"
    assert gen.signature() == f"amrlm-generator({tmp_path.name},no-repeat=4)"


@pytest.mark.parametrize(
    ("args", "stdin", "says"),
    [
        (["parse", "--model", "MODEL"], "", "<stdin>: no input (empty)"),
        (["parse", "--model", "MODEL"], "\n \n", "<stdin>: no input (empty)"),
        (["parse", "--model", "/nonexistent/m"], "x\n", "/nonexistent/m: no such model dir"),
        (["generate", "--model", "MODEL", "--on-error", "raise"], "just words\n", "<stdin>:1: "),
        (["parse", "--model", "MODEL", "--batch-size", "0"], "x\n", "must be a whole number"),
        (["generate", "--model", "MODEL", "--num-beams", "0"], "x\n", "must be a whole number"),
    ],
)
def test_bad_input_is_one_line(train_amr, tmp_path, args, stdin, says):
    model = tmp_path / "m"
    if "MODEL" in args:
        train_amr(model)
    r = _cli(*[str(model) if a == "MODEL" else a for a in args], stdin=stdin)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    said = [x for x in r.stderr.strip().splitlines() if not x.startswith(("usage:", " "))]
    assert "Traceback" not in r.stderr and len(said) == 1  # one line after argparse's usage


def test_the_builder_runs_on_the_trained_models(train_amr, tmp_path, data_dir):
    """``stog=smollm2 generator=smollm2 amr_model=DIR``: text -> parse -> re-focus -> generate;
    every input sentence ends as a record or a counted reject (the tiny models' graphs are
    noise, so most are rejects: what matters is that none is lost)."""
    import subprocess

    model = tmp_path / "amr"
    train_amr(model)
    inp = tmp_path / "s.txt"
    sentences = [e.sentence for e in load_split(data_dir, "test", limit=3)]
    inp.write_text("\n".join(sentences) + "\n")
    out = tmp_path / "build"
    cmd = [sys.executable, "experiments/build.py", f"input={inp}", f"out_dir={out}",
           "stog=smollm2", "generator=smollm2", f"amr_model={model}", "lm=none",
           "progress=false", f"hydra.run.dir={out}/hydra"]  # fmt: skip
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    records = (out / "corpus.jsonl").read_text().splitlines()
    rejects = (out / "corpus.rejects.jsonl").read_text().splitlines()
    lines = sorted(json.loads(x)["line"] for x in [*records, *rejects])
    assert lines == list(range(1, len(sentences) + 1))  # each once: none lost, none twice
    summary = json.loads((out / "build_summary.json").read_text())
    assert summary["counts"]["items"] == len(sentences) == 6
    fields = summary["signature"].split("|")
    # conf/stog/smollm2.yaml reads 256 tokens; the tiny model's positions leave it fewer
    stog = next(f for f in fields if f.startswith("stog:"))
    assert stog.startswith("stog:amrlm-parser(amr,cap=7x10,reads=") and stog.endswith(")")
    reads = int(stog.rsplit("=", 1)[1][:-1])
    assert 32 < reads < 256  # over the trained 32, under 256
    # Table 1's sources cut: the sentences longer than that, counted here word by word
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model / "parser" / "model"))
    lengths = [sum(len(tok(" " + w, add_special_tokens=False)["input_ids"]) for w in s.split())
               for s in sentences]  # fmt: skip
    cut = sum(n > reads for n in lengths)
    assert summary["table1"]["sources_cut"] == round(100 * cut / len(sentences), 2)
    assert "generator:amrlm-generator(amr,no-repeat=4)" in fields
    missing = subprocess.run([*cmd[:4], "stog=smollm2", "generator=smollm2",
                              f"amr_model={tmp_path / 'none'}", "lm=none"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert missing.returncode == 2 and "experiments/train_amr.py" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_the_answer_cap_ends_each_graph_near_its_sentence_length(tiny_gpt2, data_dir):
    from paraamr.amrlm.module import AMRModule
    from paraamr.errors import ConfigError

    sentences = [e.sentence for e in load_split(data_dir, "test", limit=4)]
    m = AMRModule(model_name_or_path=str(tiny_gpt2), arch="causal", max_source_length=24,
                  max_target_length=60, answer_cap=[1.0, 4])  # fmt: skip
    seen, generate_ids = [], m.generate_ids

    def spy(batch, **kw):  # the generated ids, before decoding
        seen.append(generate_ids(batch, **kw))
        return seen[-1]

    m.generate_ids = spy
    answers = m.generate(sentences)
    eos = m.tokenizer.eos_token_id
    for s, answer, ids in zip(sentences, answers, seen[0].tolist(), strict=True):
        written = len([t for t in ids if t != eos])
        assert written <= min(len(m.units(s)), 24) + 4 == m.answer_limit(s, 60)
        assert _depths(answer) == (0, 0) and answer.startswith("("), answer
    assert max(len([t for t in ids if t != eos]) for ids in seen[0].tolist()) < 60
    with pytest.raises(ConfigError, match="answer_cap"):
        AMRModule(model_name_or_path=str(tiny_gpt2), arch="causal", answer_cap=[1.0])


def _first_loop(ids: list[int], words: list[bool], repeats: int) -> int | None:
    """The first position where ``ids[:i]`` ends in ``repeats`` copies of a block (up to 32
    tokens) holding a word, searched by brute force over every prefix; None if none does."""
    for i in range(1, len(ids) + 1):
        for p in range(1, 33):
            if p * repeats > i:
                break
            copies = {tuple(ids[i - (k + 1) * p : i - k * p]) for k in range(repeats)}
            if len(copies) == 1 and any(words[t] for t in ids[i - p : i]):
                return i
    return None


def test_stop_loops_closes_a_looping_graph_where_the_loop_shows(tiny_gpt2, data_dir):
    """With ``stop_loops=3`` every token after the first place where the answer ends in three
    copies of one block (found here by brute force; a word is a token whose text holds more
    than brackets and spaces) is a close bracket, and the noise model's answers do loop."""
    from paraamr.amrlm.module import AMRModule
    from paraamr.errors import ConfigError

    sentences = [e.sentence for e in load_split(data_dir, "test", limit=8)]
    kw = dict(model_name_or_path=str(tiny_gpt2), arch="causal", max_source_length=24,
              max_target_length=80, max_depth=6)  # fmt: skip
    m = AMRModule(**kw, stop_loops=3)
    tok = m.tokenizer
    words = [bool(tok.decode([i]).replace("(", "").replace(")", "").strip())
             for i in range(len(tok))]  # fmt: skip
    close = tok(")", add_special_tokens=False)["input_ids"][0]
    seen, generate_ids = [], m.generate_ids
    m.generate_ids = lambda batch, **k: seen.append(generate_ids(batch, **k)) or seen[-1]
    answers = m.generate(sentences)
    free_seen, free_ids = [], None
    free = AMRModule(**kw)
    free_ids = free.generate_ids
    free.generate_ids = lambda batch, **k: free_seen.append(free_ids(batch, **k)) or free_seen[-1]
    free.generate(sentences)
    cut = 0
    for answer, ids, loose in zip(answers, seen[0].tolist(), free_seen[0].tolist(), strict=True):
        ids = [t for t in ids if t != tok.eos_token_id]
        assert _depths(answer) == (0, 0) and answer.startswith("("), answer
        at = _first_loop(ids, words, 3)
        if at is not None:
            assert set(ids[at:]) <= {close}, answer
        loose = [t for t in loose if t != tok.eos_token_id]
        first = _first_loop(loose, words, 3)
        if first is not None and first < len(loose):
            cut += 1
            assert ids[:first] == loose[:first] and len(ids) < len(loose)
    assert cut >= 2  # the rule acted on the looping answers, and only from the loop on
    with pytest.raises(ConfigError, match="stop_loops"):
        AMRModule(**kw, stop_loops=1)


def test_beam_search_keeps_the_parser_inside_its_constraint(tiny_gpt2, data_dir):
    from paraamr.amrlm.module import AMRModule
    from paraamr.errors import ConfigError

    sentences = [e.sentence for e in load_split(data_dir, "test", limit=4)]
    kw = dict(model_name_or_path=str(tiny_gpt2), arch="causal", max_source_length=24,
              max_target_length=30, max_depth=3)  # fmt: skip
    m = AMRModule(**kw, num_beams=3)
    for answer in m.generate(sentences):
        assert _depths(answer) == (0, 0) and answer.startswith("("), answer
    with pytest.raises(ConfigError, match="num_beams"):
        AMRModule(**kw, num_beams=0)


def test_the_generator_writes_no_word_ngram_twice(tiny_gpt2, data_dir):
    from paraamr.amrlm.data import generate_pairs
    from paraamr.amrlm.module import AMRModule

    items = [(e.sentence, e.graph) for e in load_split(data_dir, "test", limit=4)]
    prompts = [p for p, _ in generate_pairs(items)]

    def grams(text: str) -> list[tuple[str, ...]]:
        w = text.split()
        return [tuple(w[i : i + 3]) for i in range(len(w) - 2)]

    kw = dict(model_name_or_path=str(tiny_gpt2), arch="causal", direction="generate",
              max_source_length=64, max_target_length=40)  # fmt: skip
    looping = AMRModule(**kw).generate(prompts)
    assert any(len(set(grams(a))) < len(grams(a)) for a in looping)  # the noise repeats itself
    for answer in AMRModule(**kw, no_repeat_words=3).generate(prompts):
        assert len(set(grams(answer))) == len(grams(answer)), answer


def test_make_build_offline_trains_when_the_models_are_missing_then_builds(tmp_path):
    """Dry-run (``make -n``): the training runs only when a model folder lacks its sidecar
    (else the folder is checked), then the builder runs on the trained models."""
    r = subprocess.run(["make", "-n", "build-offline", "INPUT=README.md",
                        f"AMR_MODEL={tmp_path}"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = r.stdout.replace("\\\n", " ")
    assert f"test -f {tmp_path}/parser/model/amr_module.json" in out
    train = f"experiments/train_amr.py out_dir={tmp_path}"
    assert f"{train}  check_only=true" in out and f"{train} ; fi" in out
    assert f"+experiment=build_offline amr_model={tmp_path}" in out


def test_make_amr_model_reuses_a_folder_only_when_its_models_have_these_settings(
    train_amr, tmp_path
):
    """A real ``make amr-model`` on a folder with both models trains nothing: it checks them.
    The same settings pass; other ones (a new default recipe, a changed AMR_ARGS) stop it with
    one line naming each difference, never a silent reuse of another recipe's models."""
    import shlex

    train_amr(tmp_path / "m")
    parser_ckpt = tmp_path / "m" / "parser" / "model" / "model.safetensors"
    before = parser_ckpt.stat().st_mtime_ns

    def make(*extra):
        args = " ".join(shlex.quote(a) for a in train_amr.overrides(*extra))
        return subprocess.run(["make", "--no-print-directory", "amr-model",
                               f"AMR_MODEL={tmp_path}/m", f"AMR_ARGS={args}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip

    same = make()
    assert same.returncode == 0, same.stderr
    assert same.stdout.count("trained with these settings, reused") == 2
    other = make("stages.parser.trainer.max_steps=3", "model.freeze_layers=1")
    assert other.returncode != 0
    said = [x for x in other.stderr.splitlines() if "error:" in x]
    assert len(said) == 1 and "Traceback" not in other.stderr
    assert f"{tmp_path}/m/parser/model was trained with other settings" in said[0]
    assert "'max_steps': (2, 3)" in said[0] and "'freeze_layers': (None, 1)" in said[0]
    assert parser_ckpt.stat().st_mtime_ns == before  # nothing trained


def test_checking_a_folder_without_a_finished_model_names_it(train_amr, tmp_path):
    """``check_only=true`` on a folder where one direction never finished: a ConfigError
    naming that model folder (the parser alone was trained here)."""
    from hydra import compose, initialize_config_dir

    from paraamr.amrlm.train import check_trained

    train_amr(tmp_path, "directions=[parse]")
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("amr", overrides=[f"out_dir={tmp_path}", *train_amr.overrides()])
    with pytest.raises(ConfigError, match=f"{tmp_path}/generator/model: no finished generator"):
        check_trained(cfg)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("amr", overrides=[f"out_dir={tmp_path}", "directions=[parse]",
                                        *train_amr.overrides()])  # fmt: skip
    assert check_trained(cfg) == [f"{tmp_path}/parser/model"]


def test_make_corpus_offline_parses_each_set_once_and_builds_it_twice(tmp_path):
    """Dry-run: per source set one ``amr parse`` into BUILT/<set>.amr, read by both builds
    (re-focused: BUILT/<set>/all; original top only: BUILT/<set>/top), then both Table 2 presets."""
    r = subprocess.run(["make", "-n", "corpus-offline", f"BUILT={tmp_path}",
                        f"AMR_MODEL={tmp_path}/m"], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.replace("\\\n", " ").splitlines()
    for s in ("parabank_eval", "paranmt_small"):
        parses = [x for x in lines if "amr parse" in x and f"{tmp_path}/{s}.amr.part" in x]
        assert len(parses) == 1 and f"--input {tmp_path}/{s}_sources.txt" in parses[0]
        builds = [
            x for x in lines if "experiments/build.py" in x and f"input={tmp_path}/{s}.amr" in x
        ]
        assert len(builds) == 2
        assert any(f"out_dir={tmp_path}/{s}/all" in b and "focus.policy" not in b for b in builds)
        assert any(f"out_dir={tmp_path}/{s}/top" in b and "focus.policy=top" in b for b in builds)
    tables = [x for x in lines if "experiments/table2.py" in x]
    assert [t.split("+experiment=")[1].split()[0] for t in tables] == [
        "table2_built", "table2_built_paranmt_small"]  # fmt: skip
    assert "dtype" not in r.stdout  # fp32 unless asked for
    bf16 = subprocess.run(["make", "-n", "corpus-offline", f"BUILT={tmp_path}", "AMR_DTYPE=auto",
                           f"AMR_MODEL={tmp_path}/m"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    lines = bf16.stdout.replace("\\\n", " ").splitlines()
    parses = [x for x in lines if "amr parse" in x]
    builds = [x for x in lines if "experiments/build.py" in x]
    assert len(parses) == 2 and all("--dtype auto" in x for x in parses)
    assert len(builds) == 4
    assert all("stog.dtype=auto generator.dtype=auto" in x for x in builds)
    paired = [x for x in lines if "paraamr.cli paired" in x]  # re-focused vs round trip
    assert len(paired) == 1 and "ParaAMR-built ParaAMR-built-no-refocus" in paired[0]
    assert "table2-$s/paired-refocus.json" in paired[0]
    assert "for s in parabank-eval paranmt-small" in paired[0]


def test_the_generator_reads_its_graphs_in_the_form_it_was_trained_on(tmp_path, tiny_gpt2):
    import penman

    from paraamr.amrlm.data import generate_pairs
    from paraamr.amrlm.module import AMRModule
    from paraamr.errors import ConfigError

    g = penman.decode("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))")
    (kept,) = generate_pairs([("The boy wants to go .", g)], graph_form="penman")
    assert kept[0] == "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"  # variables kept
    (dropped,) = generate_pairs([("The boy wants to go .", g)])
    assert dropped[0] == "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )"
    kw = dict(model_name_or_path=str(tiny_gpt2), arch="causal", direction="generate")
    m = AMRModule(graph_form="penman", **kw)
    assert m.graph_prompt("(l / leave-11 :ARG0 (h / he))") == "(l / leave-11 :ARG0 (h / he))"
    m.save(tmp_path / "m")
    assert AMRModule.from_saved(tmp_path / "m").settings["graph_form"] == "penman"
    with pytest.raises(ConfigError, match="graph_form must be one of"):
        AMRModule(graph_form="amr", **kw)


def test_an_unknown_stage_eval_key_is_refused_before_any_training(train_amr, tmp_path, monkeypatch):
    def forbidden(*a, **k):
        raise AssertionError("trained before the config was checked")

    monkeypatch.setattr("paraamr.training.fit.fit", forbidden)
    with pytest.raises(ConfigError, match=r"stages.parser.eval: unknown key\(s\) \['batchsize'\]"):
        train_amr(tmp_path, "directions=[generate,parse]", "+stages.parser.eval.batchsize=3")


def test_a_stage_of_its_own_frozen_blocks_is_trained_signed_and_checked_so(train_amr, tmp_path):
    """``stages.parser.model.freeze_layers`` (the parser with more blocks trained than the
    generator): the parser's model freezes that many, its signature says so, and a rerun
    without it is refused."""
    from paraamr.amrlm.module import AMRModule
    from paraamr.signature import Signature

    result = train_amr(tmp_path, "+stages.parser.model.freeze_layers=1")
    fields = {d: Signature(r["signature"]).fields for d, r in result["directions"].items()}
    assert (fields["parse"]["freeze"], fields["generate"]["freeze"]) == ("1", "None")
    parser = AMRModule.from_saved(tmp_path / "parser" / "model")
    assert parser.settings["freeze_layers"] == 1
    assert AMRModule.from_saved(tmp_path / "generator" / "model").settings["freeze_layers"] is None
    with pytest.raises(ConfigError, match=r"'freeze_layers': \(1, None\)"):
        train_amr(tmp_path, "directions=[parse]")
