"""Silver training data for the AMR generator (paraamr.amrlm.silver): reading a parsed file
with its placeholders and bad blocks counted, choosing the sentences to parse, and the
trainer adding the silver pairs to the generator's training pairs only."""

from __future__ import annotations

import json
from pathlib import Path

import penman
import pytest

from paraamr.amrlm.silver import offline_candidates, read_silver, select_sentences, silver_sentences
from paraamr.errors import ConfigError, DataNotFoundError, InputError

GOOD = "# ::snt He left .\n(l / leave-11 :ARG0 (h / he))\n"
PLACEHOLDER = "# ::snt Chapter 9 .\n(e / amr-empty)\n"
BROKEN = "# ::snt It rains .\n(r / rain-01 :ARG0 (x\n"


def test_read_silver_counts_placeholders_and_undecodable_blocks(tmp_path):
    f = tmp_path / "silver.amr"
    empty_line = "# ::snt\n(e / amr-empty)\n"  # what the parse writes for an empty input line
    f.write_text("\n".join([GOOD, PLACEHOLDER, BROKEN, empty_line, GOOD.replace("He", "She")]))
    silver = read_silver(f)
    assert [s for s, _ in silver.items] == ["He left .", "She left ."]
    assert penman.encode(silver.items[0][1], indent=None).endswith(":ARG0 (h / he))")
    assert dict(silver.skipped) == {"placeholder": 2, "undecodable": 1}
    assert silver.summary() == {"path": str(f), "graphs": 2, "repeated": 0,
                                "skipped": {"placeholder": 2, "undecodable": 1}}  # fmt: skip


def test_read_silver_counts_graphs_stating_an_edge_twice_in_one_line(tmp_path, caplog):
    import logging

    twice = "# ::snt He left him .\n(l / leave-11 :ARG0 (h / he) :ARG0 h :ARG1 h :ARG1 h)\n"
    f = tmp_path / "silver.amr"
    f.write_text("\n".join([GOOD, twice, twice.replace("He", "She")]))
    caplog.set_level(logging.INFO)
    layout = logging.getLogger("penman.layout")
    before = layout.level
    silver = read_silver(f)
    assert layout.level == before  # the reader leaves penman's logging as it found it
    # by hand: the second and third graphs each state two edges twice; the first none
    assert silver.repeated == 2 and silver.summary()["repeated"] == 2
    assert len(silver.items) == 3 and len(silver.items[1][1].triples) == 6
    assert not [r for r in caplog.records if r.name == "penman.layout"]
    assert [r.getMessage() for r in caplog.records if "twice" in r.getMessage()] == [
        f"{f}: 2 of 3 graphs state an edge twice (read as parsed)"
    ]


def test_read_silver_errors_name_the_file_and_line(tmp_path):
    f = tmp_path / "s.amr"
    f.write_text(GOOD + "\n(w / want-01)\n")  # the second graph, line 4, has no sentence
    with pytest.raises(InputError, match=rf"^{f}:4: graph without a '# ::snt'"):
        read_silver(f)
    f.write_text(PLACEHOLDER)
    with pytest.raises(InputError, match="no usable graph"):
        read_silver(f)
    with pytest.raises(DataNotFoundError, match="make amr-silver"):
        read_silver(tmp_path / "missing.amr")


def test_select_sentences_by_hand():
    got = select_sentences(["  Hi there . ", "", "HI THERE .", "Go .", "one two three four"],
                           exclude=["go ."], max_words=3)  # fmt: skip
    assert got == ["Hi there ."]


def test_offline_candidates_read_both_files_line_by_line(data_dir):
    """The ParaBank sample is TSV without quoting: a field that opens with a quote mark
    (``" Oh !``, row 571) is one sentence, not the start of a quoted field spanning rows."""
    root = Path(data_dir) / "paraphrase"
    nmt = (root / "qqppos-paranmt-small/para/test_src.txt").read_text().splitlines()[:500]
    rows = (root / "parabank-valid-sample/pairs.unbpe.tsv").read_text().splitlines()[1:151]
    expected = nmt + [r.split("\t")[1] for r in rows]
    got = offline_candidates(data_dir)
    assert got == expected and len(got) == 650 and '" Oh !' in got
    sources = (root / "qqppos-paranmt-small/para/valid_src.txt").read_text().splitlines()
    chosen = select_sentences(got, exclude=sources)
    assert not {s.lower() for s in chosen} & {s.lower() for s in sources}
    assert len(chosen) == len({s.lower() for s in chosen})


def test_silver_directions_are_checked():
    from paraamr.amrlm.data import AMRData

    with pytest.raises(ConfigError, match="'parser' is not parse or generate"):
        AMRData(silver_directions=["parser"])


def test_the_generator_trains_on_the_silver_pairs_and_the_parser_does_not(
    train_amr, tmp_path, data_dir
):
    from paraamr.amrlm.split import load_split
    from paraamr.signature import Signature

    bio = [e for e in load_split(data_dir, "test") if e.file.endswith("bio.txt")][:3]
    silver = tmp_path / "silver.amr"
    blocks = [f"# ::snt {e.sentence}\n{penman.encode(e.graph)}\n" for e in bio]
    silver.write_text("\n".join(blocks + [PLACEHOLDER]))
    # a ready file wins over the sentences the run would parse itself: nothing is parsed
    result = train_amr(tmp_path / "run", f"data.silver={silver}", "data.silver_sentences=offline")
    assert not (tmp_path / "run" / "silver").exists()
    parse, gen = result["directions"]["parse"], result["directions"]["generate"]
    assert parse["train"]["train_pairs"] == 8  # 4 gold graphs of each file
    assert gen["train"]["train_pairs"] == 8 + 3
    assert Signature(gen["signature"]).fields["silver"] == "3"
    assert Signature(parse["signature"]).fields["silver"] == "0" and "silver" not in parse
    assert gen["silver"] == {"path": str(silver), "graphs": 3, "skipped": {"placeholder": 1},
                             "repeated": 0}  # fmt: skip
    saved = json.loads((tmp_path / "run" / "scores.json").read_text())["directions"]
    assert saved["generate"]["silver"]["graphs"] == 3


def test_make_amr_silver_parses_with_the_model_then_trains_the_generator_beside_its_parser(
    tmp_path,
):
    """Dry run (``make -n``): the sentences are selected from the data folder alone (the
    selection leaves out the corpus-offline sources itself: nothing is built first), the
    parse uses AMR_MODEL, the generator trains on the silver file into SILVER_DIR next to a
    link to AMR_MODEL's parser."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    model, built = tmp_path / "m", tmp_path / "b"
    r = subprocess.run(["make", "-n", "amr-silver", f"AMR_MODEL={model}", f"BUILT={built}"],
                       cwd=root, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.replace("\\\n", " ").splitlines()
    silver = f"{model}-silver"
    pick = [x for x in lines if "paraamr.amrlm.silver" in x]
    assert len(pick) == 1 and f"> {silver}/sentences.txt.part" in pick[0]
    assert "--data " in pick[0] and "--exclude" not in pick[0]
    assert not [x for x in lines if f"{built}/" in x]
    parse = [x for x in lines if "amr parse" in x]
    assert len(parse) == 1 and f"--model {model} --input {silver}/sentences.txt" in parse[0]
    assert [x for x in lines if f"ln -sfn {model}/parser {silver}/parser" in x]
    train = [x for x in lines if "experiments/train_amr.py" in x and f"out_dir={silver}" in x]
    assert len(train) == 1 and f"data.silver={silver}/silver.amr" in train[0]
    assert "'directions=[generate]'" in train[0]
    # the trained models come first (make amr-model), then the parse
    assert lines.index(parse[0]) > min(
        i for i, x in enumerate(lines) if f"out_dir={model} " in x + " "
    )


def test_make_amr_silver_parses_your_sentences_and_checks_the_file_first(tmp_path):
    """Dry run with SILVER_INPUT: no sentence selection, the file checked before the parse."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    mine = tmp_path / "mine.txt"
    r = subprocess.run(["make", "-n", "amr-silver", f"AMR_MODEL={tmp_path}/m",
                        f"SILVER_INPUT={mine}", f"SILVER_DIR={tmp_path}/s"],
                       cwd=root, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.replace("\\\n", " ").splitlines()
    assert not [x for x in lines if "paraamr.amrlm.silver" in x]
    check = [i for i, x in enumerate(lines) if f'test -f "{mine}"' in x]
    parse = [
        i for i, x in enumerate(lines) if f"amr parse --model {tmp_path}/m --input {mine}" in x
    ]
    assert len(check) == len(parse) == 1 and check[0] < parse[0]
    assert "is no file" in lines[check[0]]


def test_make_amr_silver_parses_into_a_silver_dir_that_does_not_exist_yet(tmp_path):
    """A real make run of the parse step with SILVER_INPUT (the parse itself replaced by a
    script that writes its --output file): SILVER_DIR is made before the parse writes there."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    for role in ("parser", "generator"):  # make amr-model finds both models (checked by `true`)
        (tmp_path / "m" / role / "model").mkdir(parents=True)
        (tmp_path / "m" / role / "model" / "amr_module.json").write_text("{}")
    mine = tmp_path / "mine.txt"
    mine.write_text("He left .\n")
    fake = tmp_path / "parse.sh"
    fake.write_text('#!/bin/sh\nwhile [ $# -gt 1 ]; do shift; done\necho "(e / x)" > "$1"\n')
    fake.chmod(0o755)
    silver = tmp_path / "new" / "s"
    r = subprocess.run(["make", f"{silver}/silver.amr", f"AMR_MODEL={tmp_path}/m",
                        f"SILVER_INPUT={mine}", f"SILVER_DIR={silver}", f"AMR_PARSE={fake}",
                        "AMR_TRAIN=true"],
                       cwd=root, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (silver / "silver.amr").read_text() == "(e / x)\n"


def test_more_candidates_follow_the_offline_ones_without_repeats(tmp_path, data_dir, capsys):
    """``--also``: the file's lines after the offline candidates; a repeat of one of them (any
    case), an excluded sentence, a corpus-offline source (excluded always) and one of over 40
    words are left out: the offline part is what a training run's ``offline`` silver reads."""
    from paraamr.amrlm.silver import main

    root = Path(data_dir) / "paraphrase"
    first = (root / "qqppos-paranmt-small/para/test_src.txt").read_text().splitlines()[0]
    also = tmp_path / "more.txt"
    long = " ".join(["word"] * 41)
    valid = (root / "qqppos-paranmt-small/para/valid_src.txt").read_text().splitlines()
    also.write_text(f"a new sentence .\n{first.upper()}\n{long}\nanother one .\nleft out .\n"
                    f"{valid[7]}\n")  # fmt: skip
    exclude = tmp_path / "exclude.txt"
    exclude.write_text("LEFT OUT .\n")
    assert main(["--data", str(data_dir), "--exclude", str(exclude), "--also", str(also)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == silver_sentences("offline", data_dir) + ["a new sentence .", "another one ."]
    assert len(out) == 639 + 2 and "you can be scheduled for that in four to six weeks ." not in out


def test_the_offline_silver_sentences_leave_out_the_corpus_offline_sources(data_dir):
    """By hand: the candidates in order, without repeats, minus the sentences of ParaNMT-small's
    validation sources and ParaBank-Eval's sources; one candidate is a validation source."""
    from paraamr.amrlm.silver import offline_exclusions, silver_sentences

    root = Path(data_dir) / "paraphrase"
    valid = (root / "qqppos-paranmt-small/para/valid_src.txt").read_text().splitlines()
    shared = "you can be scheduled for that in four to six weeks ."
    assert shared in offline_candidates(data_dir) and shared in valid
    excluded = {s.lower() for s in offline_exclusions(data_dir)}
    assert {s.lower() for s in valid} <= excluded and len(excluded) == 499 + 400
    expected, seen = [], set(excluded)
    for s in offline_candidates(data_dir):
        if s.lower() not in seen and len(s.split()) <= 40:
            seen.add(s.lower())
            expected.append(s)
    got = silver_sentences("offline", data_dir)
    assert got == expected and shared not in got and len(got) == 639
    assert silver_sentences("offline", data_dir, limit=300) == expected[:300]


def test_silver_sentences_of_a_file_and_its_errors(tmp_path, data_dir):
    from paraamr.amrlm.silver import silver_sentences

    f = tmp_path / "s.txt"
    f.write_text("A b .\n\na B .\nc d .\n")
    assert silver_sentences(str(f), data_dir, limit=5) == ["A b .", "c d ."]
    assert silver_sentences(str(f), data_dir, limit=1) == ["A b ."]
    with pytest.raises(DataNotFoundError, match="nope.txt: silver sentences not found"):
        silver_sentences(str(tmp_path / "nope.txt"), data_dir)
    f.write_text("\n \n")
    with pytest.raises(InputError, match="no silver sentence left"):
        silver_sentences(str(f), data_dir)


def test_own_silver_settings_are_checked():
    from paraamr.amrlm.data import AMRData

    with pytest.raises(ConfigError, match="parser cannot train on the graphs it writes"):
        AMRData(silver_sentences="offline", silver_directions=["parse", "generate"])
    AMRData(silver="x.amr", silver_sentences="offline", silver_directions=["parse"])  # file wins
    with pytest.raises(ConfigError, match="silver_limit: at least 1"):
        AMRData(silver_limit=0)


def _blocks(path: Path) -> list[tuple[str, str]]:
    """``(sentence, graph)`` of each block of a parsed file, read as text."""
    out = []
    for block in path.read_text().strip().split("\n\n"):
        head, graph = block.split("\n", 1)
        out.append((head.removeprefix("# ::snt ").strip(), graph.strip()))
    return out


def test_a_run_parses_its_own_silver_sentences_with_its_parser_then_trains_the_generator(
    train_amr, tmp_path
):
    """The run's parser parses the first ``silver_limit`` selected sentences into
    ``<out_dir>/silver/silver.amr``; the generator trains on gold + the graphs that are not
    placeholders (counted from the file), the parser on gold only; a rerun reads the file again
    and retrains nothing; a generator trained on other pairs is refused, not reused."""
    from paraamr.errors import ConfigError
    from paraamr.signature import Signature

    sents = tmp_path / "sentences.txt"
    sents.write_text("The boy wants to go .\n\nthe BOY wants to go .\nShe sang .\n"
                     "It rained all day .\nHe left .\n")  # fmt: skip
    run = tmp_path / "run"
    gold = train_amr(run)  # gold pairs only, then the same folder with silver: refused
    assert gold["directions"]["generate"]["train"]["train_pairs"] == 8
    over = (f"data.silver_sentences={sents}", "data.silver_limit=3")
    with pytest.raises(ConfigError, match=r"'train_pairs': \(8, "):
        train_amr(run, *over)
    parsed = _blocks(run / "silver" / "silver.amr")  # the parse ran before the refusal
    assert [s for s, _ in parsed] == ["The boy wants to go .", "She sang .", "It rained all day ."]
    assert (run / "silver" / "sentences.txt").read_text().splitlines() == [s for s, _ in parsed]
    usable = sum(g != PLACEHOLDER.split("\n", 1)[1].strip() for _, g in parsed)
    assert usable >= 1, "the tiny parser wrote no graph"

    fresh = tmp_path / "fresh"
    (fresh / "parser").mkdir(parents=True)
    for f in (run / "parser").iterdir():  # the same parser, so the same silver graphs
        if f.name in ("model", "train_result.json"):
            (fresh / "parser" / f.name).symlink_to(f)
    result = train_amr(fresh, *over)
    parse, gen = result["directions"]["parse"], result["directions"]["generate"]
    assert _blocks(fresh / "silver" / "silver.amr") == parsed
    assert parse["train"]["train_pairs"] == 8 and "silver" not in parse
    assert gen["train"]["train_pairs"] == 8 + usable
    assert Signature(gen["signature"]).fields["silver"] == str(usable)
    assert gen["silver"]["source"] == f"{sents}:3" and gen["silver"]["parsed"] == 3
    assert gen["silver"]["graphs"] == usable and gen["silver"]["parse_minutes"] >= 0

    before = (fresh / "silver" / "silver.amr").stat().st_mtime_ns
    again = train_amr(fresh, *over)["directions"]["generate"]
    assert (fresh / "silver" / "silver.amr").stat().st_mtime_ns == before
    assert again["train"] == gen["train"] and again["signature"] == gen["signature"]


def test_own_silver_without_a_parser_is_a_config_error(train_amr, tmp_path):
    from paraamr.errors import ConfigError

    with pytest.raises(ConfigError, match="no parser in .* to parse them"):
        train_amr(tmp_path / "run", "directions=[generate]", "data.silver_sentences=offline")
