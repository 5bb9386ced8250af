"""Every bad-input class of the corpus builder, fed through a real input file and
:func:`build_shard`: with ``on_error=skip`` it is one counted reject (file line, stage, reason) and
``items == records + rejects``; with ``on_error=raise`` it stops with
``file:line: stage: reason``."""

from __future__ import annotations

import json
import re

import pytest

from paraamr.builder.pipeline import BuildConfig, Builder, BuildError, build_shard
from paraamr.testing.fakes import ConceptGenerator

GOOD_GRAPH = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"


class TableStog:
    """An AMR parser stand-in with amrlib's contract: a PENMAN string per sentence, or ``None``
    where amrlib could not deserialise any beam (here: sentences containing ``unparsable``)."""

    def signature(self) -> str:
        return "table-stog(test)"

    def parse(self, texts):
        return [None if "unparsable" in t else GOOD_GRAPH for t in texts]


def _run(path, fmt, on_error, out, stog=None):
    b = Builder(
        generator=ConceptGenerator(),
        stog=stog,
        cfg=BuildConfig(chunk_size=2, on_error=on_error),
        source=str(path),
    )
    return build_shard(b, path, out, input_format=fmt, progress=False)


def _rejects(out):
    p = out / "shard-00000-of-00001.rejects.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()]


PENMAN_OK = f"# ::snt The boy wants to go.\n{GOOD_GRAPH}\n"
CASES = {
    # name: (file name, content, format, parser, bad line, stage, reason pattern)
    "bad-json": (
        "in.jsonl",
        '{"text": "The boy wants to go."}\n{"text": "broken\n{"text": "He left."}\n',
        "jsonl",
        TableStog(),
        2,
        "input",
        r"bad JSON line \(JSONDecodeError",
    ),
    "json-without-text": (
        "in.jsonl",
        '{"text": "The boy wants to go."}\n{"sentence": "x"}\n{"text": "He left."}\n',
        "jsonl",
        TableStog(),
        2,
        "input",
        r"bad JSON line \(KeyError",
    ),
    "amrlib-returns-none": (
        "in.txt",
        "The boy wants to go.\nAn unparsable sentence.\nHe left.\n",
        "text",
        TableStog(),
        2,
        "parse",
        r"the AMR parser returned no graph \(None\)",
    ),
    "disconnected-penman": (
        "in.amr",
        PENMAN_OK
        + "\n# ::snt Two trees.\n(a / alpha :ARG0 (b / beta))\n(c / gamma :ARG1 (d / delta))\n\n"
        + PENMAN_OK,
        "penman",
        None,
        4,
        "input",
        r"malformed PENMAN graph: unexpected text after the graph: '\(c / gamma",
    ),
    "text-after-the-graph": (
        "in.amr",
        PENMAN_OK + "\n# ::snt Stray.\n(a / alpha :ARG0 (b / beta)) and more\n\n" + PENMAN_OK,
        "penman",
        None,
        4,
        "input",
        r"malformed PENMAN graph: unexpected text after the graph: 'and more'",
    ),
    "parse-command-placeholder": (  # `paraamr amr parse` found no graph: never generated from
        "in.amr",
        PENMAN_OK + "\n# ::snt A sentence the parser lost.\n(e / amr-empty)\n\n" + PENMAN_OK,
        "penman",
        None,
        4,
        "parse",
        r"placeholder graph \(e / amr-empty\)",
    ),
    "edge-without-target": (  # penman reads it with a warning; no focus of it can be laid out
        "in.amr",
        PENMAN_OK
        + "\n# ::snt My cowboy days are over.\n(o / over\n   :\n   :ARG1 (c / cowboy))\n\n"
        + PENMAN_OK,
        "penman",
        None,
        4,
        "parse",
        r"malformed AMR graph: AMRError: 1 edge\(s\) with no target, the first: o :$",
    ),
    "all-paraphrases-equal-the-source": (
        "in.amr",
        PENMAN_OK + "\n# ::snt Boy want .\n(w / want-01 :ARG0 (b / boy))\n\n" + PENMAN_OK,
        "penman",
        None,
        4,
        "postprocess",
        r"no paraphrase left after post-processing .*identical",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_a_counted_reject_or_a_clear_error(tmp_path, case):
    name, content, fmt, stog, bad_line, stage, reason = CASES[case]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    state = _run(path, fmt, "skip", tmp_path / "skip", stog)
    c = state["counts"]
    assert c["items"] == 3 and c["records"] == 2 and c["rejects"] == 1
    assert c["items"] == c["records"] + c["rejects"]
    (rej,) = _rejects(tmp_path / "skip")
    assert (rej["line"], rej["stage"]) == (bad_line, stage)
    assert re.search(reason, rej["reason"]), rej["reason"]

    with pytest.raises(BuildError) as e:
        _run(path, fmt, "raise", tmp_path / "raise", stog)
    assert str(e.value).startswith(f"{path}:{bad_line}: {stage}: ")
    assert re.search(reason, str(e.value))


def test_two_trees_in_one_penman_block_are_rejected_not_truncated(tmp_path):
    """penman.decode reads the first tree only; the PENMAN block reader (paraamr.amr.io) rejects
    a block holding a second tree instead (a graph string from the AMR parser with trees sharing
    variables is read as one graph by paraamr.builder.graphs)."""
    path = tmp_path / "in.amr"
    path.write_text(
        "# ::snt Alpha beta gamma.\n(a / alpha :ARG0 (b / beta))\n(c / gamma :ARG1 a)\n",
        encoding="utf-8",
    )
    b = Builder(generator=ConceptGenerator(), cfg=BuildConfig(keep_graphs=True))
    state = build_shard(b, path, tmp_path / "out", progress=False)
    assert state["counts"]["records"] == 0 and state["counts"]["rejects"] == 1
    (rej,) = _rejects(tmp_path / "out")
    assert rej["stage"] == "input" and "unexpected text after the graph" in rej["reason"]


def test_build_checks_input_then_models_in_one_line_each(tmp_path):
    """``experiments/build.py``: the input is checked (given, a file, not empty) before any
    model loads; a missing model dir is one line naming what makes it."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    good, empty, blank = tmp_path / "s.txt", tmp_path / "empty.txt", tmp_path / "blank.txt"
    good.write_text("The boy left.\n")
    empty.write_text("")
    blank.write_text("\n  \n")
    nomodels = f"models_dir={tmp_path / 'models'}"
    for args, says in (
        (
            [f"input={good}", nomodels],
            f"{tmp_path}/models/model_parse_xfm_bart_large not found: "
            "download the amrlib models with `make models`",
        ),
        (
            [f"input={good}", "+experiment=build_tiny", f"tiny_dir={tmp_path / 'tiny'}"],
            f"{tmp_path}/tiny/stog not found: build the tiny test models with `make tiny-models`",
        ),
        ([f"input={empty}", nomodels], f"{empty}: no sentences (empty input)"),
        ([f"input={blank}", "+experiment=build_tiny"], f"{blank}: no sentences (empty input)"),
        ([f"input={tmp_path / 'nosuch.txt'}", nomodels], "nosuch.txt: no such file"),
        ([f"input={tmp_path}", nomodels], f"{tmp_path}: is a directory"),
        (["input=", nomodels], "input= is required"),
        ([nomodels], "input= is required"),
    ):
        r = subprocess.run(
            [sys.executable, "experiments/build.py", *args, f"out_dir={tmp_path / 'out'}",
             f"hydra.run.dir={tmp_path / 'hydra'}"],
            cwd=root, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (args, r.stderr)
        assert lines[0].startswith("build.py: error: ") and says in lines[0], (args, lines[0])
        if "make" not in says:  # the input fails before the models are looked at
            assert "make" not in lines[0]


def test_the_shard_log_names_each_stage_rate(tmp_path, caplog):
    """Without a progress bar the stage rates still reach the user: the shard's last log line."""
    import logging

    path = tmp_path / "in.txt"
    path.write_text("The boy wants to go.\nHe left.\n")
    with caplog.at_level(logging.INFO, logger="paraamr.builder.pipeline"):
        _run(path, "text", "skip", tmp_path / "out", TableStog())
    (line,) = [r.getMessage() for r in caplog.records if "stage rates" in r.getMessage()]
    assert re.search(r"2 items, 2 records, .*stage rates this run: parse [\d.]+/s, generate", line)


def test_duplicate_triples_are_counted_once_per_graph_not_logged_per_focus(tmp_path, caplog):
    import logging

    path = tmp_path / "in.amr"
    dup = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b) :ARG0 b)"  # ARG0 b twice
    path.write_text(f"# ::snt The boy wants to go.\n{dup}\n\n{PENMAN_OK}")
    with caplog.at_level(logging.INFO):
        state = _run(path, "penman", "skip", tmp_path / "out")
    assert state["counts"]["duplicate_triples"] == 1  # one graph, one repeated triple
    ours = [r for r in caplog.records if r.name.startswith("paraamr") and "duplicate" in r.msg]
    assert not ours  # was one warning per graph and focus (889 lines for 400 parsed sentences)
