"""The OpenVINO engine against PyTorch on tiny models saved as the AMR models are: the same
greedy answers under the parser's constraints and the generator's no-repeat rule, the export
made once per weights and exporter, and one-line errors for a missing environment, a failed
export and a broken export folder. An export runs optimum-intel in its own process (~30 s on
a 2-core CPU, a tiny model too), so the tests that export are slow but one: the answers of a
tiny Llama, SmolLM2's architecture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from paraamr.errors import ConfigError
from paraamr.lms.engines import check_engine, engine_label
from paraamr.lms.export import ExportError, export_python, openvino_ir

needs_export = pytest.mark.skipif(
    not export_python().is_file(), reason="no OpenVINO export environment (make setup)"
)

SENTENCES = [
    "the boy wants to go .",
    "she said that he would come home late tonight",
    "no",
    "why did the cat sit on the mat ?",
    "it rains",
    "a very long sentence about many things that happen in a small town by the sea",
]


def _tiny_llama(path: Path, tokenizer_dir: str, seed: int = 0) -> str:
    """A tiny Llama (SmolLM2's architecture) beside the tiny GPT-2's tokenizer."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                      max_position_embeddings=256, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id)  # fmt: skip
    LlamaForCausalLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module", params=["llama", pytest.param("gpt2", marks=pytest.mark.slow)])
def saved_amr(request, tiny_gpt2, tmp_path_factory):
    """A tiny parser and generator saved as ``make amr-model`` saves them."""
    from paraamr.amrlm.module import AMRModule

    root = tmp_path_factory.mktemp(f"amr-{request.param}")
    base = tiny_gpt2 if request.param == "gpt2" else _tiny_llama(root / "base", tiny_gpt2)
    for direction, role in (("parse", "parser"), ("generate", "generator")):
        m = AMRModule(direction=direction, model_name_or_path=base, max_source_length=48,
                      max_target_length=40, warmup_steps=0)  # fmt: skip
        m.save(root / role / "model")
    return root


def _answers(module, prompts, engine):
    from paraamr.lms.answers import answers

    module.set_engine(engine)
    return answers(module, prompts, batch_size=4, progress=False)


@needs_export
def test_openvino_answers_equal_pytorch_under_the_constraints(saved_amr):
    from paraamr.amr.serialize import deserialize
    from paraamr.amrlm.module import AMRModule

    parser = AMRModule.from_saved(saved_amr / "parser" / "model")
    parser.set_decoding([2.0, 4.0], None)  # a tight answer cap: graphs closed early
    hf = _answers(parser, SENTENCES, {"name": "hf"})
    ov = _answers(parser, SENTENCES, {"name": "openvino", "threads": 1})
    assert ov == hf
    assert all(deserialize(a) is not None or a.count("(") == a.count(")") for a in ov)

    gen = AMRModule.from_saved(saved_amr / "generator" / "model")
    gen.set_decoding(None, 2)  # no word bigram twice
    prompts = ["( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )", "( rain-01 )"] * 2
    assert _answers(gen, prompts, {"name": "openvino"}) == _answers(gen, prompts, {"name": "hf"})


@needs_export
def test_genai_answers_equal_pytorch_and_openvino_under_the_grammar(saved_amr):
    """One grammar on three engines: XGrammar's matcher in the project's loop (PyTorch,
    OpenVINO) and inside OpenVINO GenAI's pipeline give the same greedy answers, cut answers
    closed the same way."""
    from paraamr.amr.serialize import deserialize
    from paraamr.amrlm.grammar import accepts, graph_grammar
    from paraamr.amrlm.module import AMRModule

    parser = AMRModule.from_saved(saved_amr / "parser" / "model")
    parser.set_decoding([2.0, 4.0], None, constraint="grammar")
    hf = _answers(parser, SENTENCES, {"name": "hf"})
    assert _answers(parser, SENTENCES, {"name": "openvino", "threads": 1}) == hf
    assert _answers(parser, SENTENCES, {"name": "genai", "threads": 1}) == hf
    grammar = graph_grammar(parser.settings["max_depth"])
    assert all(accepts(grammar, a) and deserialize(a) is not None for a in hf), hf

    gen = AMRModule.from_saved(saved_amr / "generator" / "model")
    gen.set_decoding(None, None)
    prompts = ["( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )", "( rain-01 )"] * 2
    assert _answers(gen, prompts, {"name": "genai"}) == _answers(gen, prompts, {"name": "hf"})


@needs_export
def test_genai_greedy_search_has_no_ngram_rule(saved_amr):
    """Why the generator's no-repeat rule is refused on ``genai``: the pipeline's own
    ``no_repeat_ngram_size`` leaves greedy answers as they are (a token bigram written twice,
    counted here), so it cannot stand in for the rule."""
    from paraamr.amrlm.module import AMRModule
    from paraamr.lms.export import openvino_ir
    from paraamr.lms.genai import GenAIPipeline

    gen = AMRModule.from_saved(saved_amr / "generator" / "model")
    pipe = GenAIPipeline(openvino_ir(saved_amr / "generator" / "model"), threads=1)
    prompts = [gen.units(p) for p in ("( want-01 :ARG0 ( boy ) )", "( rain-01 )", "( a )")]
    eos = int(gen.tokenizer.eos_token_id)

    def twice(rows):
        grams = [list(zip(r, r[1:], strict=False)) for r in rows]
        return sum(len(g) - len(set(g)) for g in grams)

    import numpy as np
    import openvino as ov
    import openvino_genai as og

    free = pipe.answers(prompts, [30] * 3, eos)
    configs = []
    for _ in prompts:
        cfg = og.GenerationConfig()
        cfg.max_new_tokens, cfg.do_sample, cfg.eos_token_id = 30, False, eos
        cfg.stop_token_ids = {eos}
        cfg.no_repeat_ngram_size = 2
        configs.append(cfg)
    tensors = [ov.Tensor(np.asarray([p], dtype=np.int64)) for p in prompts]
    ruled = [list(r.m_generation_ids[0]) for r in pipe.pipe.generate(tensors, configs)]
    ruled = [r[:-1] if r and r[-1] == eos else r for r in ruled]
    assert twice(free) > 0 and ruled == free


@needs_export
def test_genai_answers_follow_the_no_repeat_rule_exactly(saved_amr):
    """The pipeline decodes without the rule; an answer the rule would have changed (a banned
    token in it) is decoded again under the rule by the project's loop: the answers are
    PyTorch's under the rule, and exactly the answers the rule changes were decoded again."""
    from paraamr.amrlm.module import AMRModule

    gen = AMRModule.from_saved(saved_amr / "generator" / "model")
    prompts = ["( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )", "( rain-01 )", "( a )",
               "( say-01 :ARG0 ( she ) :ARG1 ( come-01 :ARG1 ( he ) ) )"]  # fmt: skip
    gen.set_decoding(None, None)
    free = _answers(gen, prompts, {"name": "hf"})
    gen.set_decoding(None, 2)
    hf = _answers(gen, prompts, {"name": "hf"})
    genai = _answers(gen, prompts, {"name": "genai", "threads": 1})
    changed = sum(a != b for a, b in zip(free, hf, strict=True))
    assert genai == hf
    assert 0 < changed < len(prompts) and gen.redone == changed


def test_genai_refuses_what_its_pipeline_cannot_run(saved_amr):
    from paraamr.amrlm.module import AMRModule

    m = AMRModule.from_saved(saved_amr / "parser" / "model")
    m.set_decoding(None, None, stop_loops=3)
    with pytest.raises(ConfigError, match="genai cannot stop loops"):
        m.set_engine({"name": "genai"})  # before any export
    m.set_decoding(None, None, num_beams=2)
    with pytest.raises(ConfigError, match="greedily only; num_beams=2"):
        m.set_engine({"name": "genai"})


def test_a_genai_export_without_its_tokenizer_is_one_line(tmp_path):
    from paraamr.lms.genai import GenAIPipeline

    (tmp_path / "openvino_model.xml").write_text("<net>")
    with pytest.raises(ExportError, match="no openvino_tokenizer.xml") as e:
        GenAIPipeline(tmp_path)
    assert len(str(e.value).splitlines()) == 1
    (tmp_path / "openvino_tokenizer.xml").write_text("<net>")
    with pytest.raises(ExportError, match="OpenVINO GenAI cannot load it") as e:
        GenAIPipeline(tmp_path)
    assert len(str(e.value).splitlines()) == 1


@pytest.mark.slow
@needs_export
def test_the_export_is_made_once_per_weights_and_again_when_they_change(saved_amr, tmp_path):
    import shutil

    from paraamr.amrlm.module import AMRModule

    model = tmp_path / "model"
    shutil.copytree(
        saved_amr / "parser" / "model", model, ignore=shutil.ignore_patterns("openvino")
    )
    first = openvino_ir(model)
    record = json.loads((first / "export.json").read_text())
    log = first.with_name(first.name + ".log")  # the exporter's output, rewritten by each export
    stamp = (first / "openvino_model.xml").stat().st_mtime_ns, log.stat().st_mtime_ns
    assert openvino_ir(model) == first  # reused: not exported again
    assert ((first / "openvino_model.xml").stat().st_mtime_ns, log.stat().st_mtime_ns) == stamp
    assert record["versions"]["optimum-intel"] and record["model_dir"] == str(model)
    m = AMRModule.from_saved(model)
    with torch.no_grad():
        m.model.get_input_embeddings().weight.mul_(1.5)
    m.save(model)  # trained again: other weights
    second = openvino_ir(model)
    assert second != first and second.parent == first.parent
    assert sorted(p.name for p in first.parent.iterdir() if p.is_dir()) == sorted(
        [first.name, second.name]
    )


@needs_export
def test_a_missing_environment_is_one_line_naming_make_setup(saved_amr, monkeypatch):
    from paraamr.lms import export

    export.exporter_versions.cache_clear()
    monkeypatch.setenv("PARAAMR_EXPORT_PYTHON", "/nonexistent/export/bin/python")
    with pytest.raises(ExportError) as e:
        openvino_ir(saved_amr / "parser" / "model")
    assert len(str(e.value).splitlines()) == 1 and "make setup" in str(e.value)


@pytest.mark.slow
@needs_export
def test_a_failed_export_is_one_line_naming_the_folder_and_the_log(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    (bad / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(ExportError) as e:
        openvino_ir(bad)
    msg = str(e.value)
    assert len(msg.splitlines()) == 1 and msg.startswith(f"{bad}: OpenVINO export failed")
    log = Path(msg.rsplit("log: ", 1)[1])
    assert log.is_file() and log.stat().st_size > 0
    assert not list((bad / "openvino").glob("*/export.json"))  # nothing left that looks done


def test_a_broken_export_folder_is_one_line(tmp_path):
    from paraamr.lms.engines import OpenVINOSteps

    with pytest.raises(ExportError, match="no openvino_model.xml"):
        OpenVINOSteps(tmp_path)
    (tmp_path / "openvino_model.xml").write_text("<net>")
    with pytest.raises(ExportError, match="OpenVINO cannot load it") as e:
        OpenVINOSteps(tmp_path)
    assert len(str(e.value).splitlines()) == 1


@pytest.mark.slow
@needs_export
def test_openvino_decodes_greedily_only(saved_amr):
    from paraamr.amrlm.module import AMRModule

    m = AMRModule.from_saved(saved_amr / "parser" / "model")
    m.set_decoding(None, None, num_beams=2)
    with pytest.raises(ConfigError, match="greedily only; num_beams=2"):
        m.set_engine({"name": "openvino"})  # before any export
    m.set_decoding(None, None)
    m.set_engine({"name": "openvino"})
    with pytest.raises(ConfigError, match="decodes greedily only"):
        m.generate(["a b"], num_beams=2)  # one call's beams
    m.set_engine({"name": "hf"})
    m.set_precision("bf16")
    with pytest.raises(ConfigError, match="decodes the saved fp32 weights"):
        m.set_engine({"name": "openvino"})


def test_engine_settings_are_checked():
    with pytest.raises(ConfigError, match="engine.name must be one of"):
        check_engine({"name": "vllm"})
    for name in ("openvino", "genai"):
        with pytest.raises(ConfigError, match="bf16 on one thread"):
            check_engine({"name": name, "precision": "bf16", "threads": 1})
    with pytest.raises(ConfigError, match="precision must be one of"):
        check_engine({"name": "openvino", "precision": "int4"})
    assert engine_label(None) == engine_label({"name": "hf", "precision": "bf16"}) == ""


@pytest.mark.slow
@needs_export
def test_the_engine_is_named_in_the_builder_signatures(saved_amr):
    from paraamr.builder.models import TrainedGenerator, TrainedStog

    for cls in (TrainedStog, TrainedGenerator):
        hf = cls(str(saved_amr)).signature()
        ov = cls(str(saved_amr), engine={"name": "openvino"}).signature()
        assert "engine" not in hf and ov == hf[:-1] + ",engine=openvino-f32)"
        genai = cls(str(saved_amr), engine={"name": "genai"}).signature()
        rule = ",grammar" if cls is TrainedStog else ""  # the parser runs the grammar there
        assert genai == hf[:-1] + f"{rule},engine=genai-f32)"


def test_bf16_on_one_core_is_refused_before_openvino_runs(tmp_path, monkeypatch):
    """OpenVINO 2026.4.1 kills the process (SIGFPE) on bf16 on one core: refused, not run."""
    import os

    from paraamr.lms.engines import OpenVINOSteps
    from paraamr.lms.genai import GenAIPipeline

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    with pytest.raises(ConfigError, match="bf16 on one core"):
        OpenVINOSteps(tmp_path, precision="bf16", threads=2)
    with pytest.raises(ConfigError, match="bf16 on one core"):
        GenAIPipeline(tmp_path, precision="bf16", threads=2)


@pytest.mark.slow
@needs_export
def test_amr_parse_on_openvino_and_genai_writes_what_pytorch_writes(saved_amr, tmp_path, capsys):
    from paraamr.cli import main

    src = tmp_path / "s.txt"
    src.write_text("\n".join(SENTENCES) + "\n")
    outs = []
    for engine in ("hf", "openvino"):
        main(["amr", "parse", "--model", str(saved_amr), "--input", str(src), "--engine", engine])
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[0].count("# ::snt") == len(SENTENCES)
    grammar = []
    for args in (["--engine", "hf", "--constraint", "grammar"], ["--engine", "genai"]):
        main(["amr", "parse", "--model", str(saved_amr), "--input", str(src), *args])
        grammar.append(capsys.readouterr().out)
    assert grammar[0] == grammar[1] and grammar[0].count("# ::snt") == len(SENTENCES)


def test_a_pipeline_engine_gets_full_batches():
    """A module decoding on a self-batching pipeline gets PIPELINE_BATCH prompts a call
    however small the caller's batch size; one on the project's loop keeps the caller's."""
    from paraamr.lms.answers import answers
    from paraamr.lms.genai import PIPELINE_BATCH

    class Recorder:
        engine_pipeline = None

        def __init__(self):
            self.calls = []

        def generate(self, batch):
            self.calls.append(len(batch))
            return [p.upper() for p in batch]

    prompts = [f"p{i}" * (i % 7 + 1) for i in range(PIPELINE_BATCH + 44)]
    loop = Recorder()
    assert answers(loop, prompts, batch_size=16, progress=False) == [p.upper() for p in prompts]
    assert max(loop.calls) == 16
    piped = Recorder()
    piped.engine_pipeline = object()
    assert answers(piped, prompts, batch_size=16, progress=False) == [p.upper() for p in prompts]
    assert sorted(piped.calls) == [44, PIPELINE_BATCH]
