import json
import re
import subprocess
import sys

import pytest

from paraamr.cli import main
from paraamr.errors import CorpusFormatError


@pytest.mark.parametrize("extra,expected", [([], "4"), (["--variant", "root-depth"], "2")])
def test_ted_command(capsys, extra, expected):
    a, b = "(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))"
    main(["ted", a, b, "--depth", "3", *extra])
    # default: the authors' script keeps d <= 4 from ROOT, all of both trees: the full TED, 4;
    # root-depth keeps ROOT, S and the level below S: (ROOT (S NP VP)) vs (ROOT (S VP .)), 2
    assert capsys.readouterr().out.strip() == expected


def test_metric_on_tree_pairs(tmp_path, capsys):
    f = tmp_path / "trees.tsv"
    f.write_text(
        "(ROOT (S (NP (PRP I)) (VP (VBP know))))\t(ROOT (S (VP (VB go)) (. .)))\n"
        "(ROOT (NP (NN a)))\t(ROOT (NP (NN b)))\n"
    )
    main(["metric", "tedf", str(f), "--trees"])
    out = capsys.readouterr()
    assert out.out.split() == ["4", "0"] and "mean\t2\t" in out.err


def test_metric_bad_line_names_file_and_line(tmp_path):
    f = tmp_path / "p.tsv"
    f.write_text("a\tb\nonly one column\n")
    with pytest.raises(
        CorpusFormatError, match=r"p.tsv:2: expected 2 tab-separated columns, got 1"
    ):
        main(["metric", "iou", str(f), "--debug"])  # --debug: the exception itself


def _one_line_error(capsys, argv) -> str:
    """Run the CLI expecting the one-line error: exit status 2, no traceback."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2, err
    assert "Traceback" not in err, err
    last = err.splitlines()[-1]  # progress bars of models that loaded may come first
    assert last.startswith("paraamr") and "error:" in last, err
    assert sum("error:" in x for x in err.splitlines()) == 1, err
    return last


def test_errors_are_one_line_with_exit_status_2(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "p.tsv"
    bad.write_text("only one column\n")
    err = _one_line_error(capsys, ["metric", "iou", str(bad)])
    assert "p.tsv:1:" in err and "--on-error skip" in err and "on_error=" not in err
    assert "unknown TED variant 'nosuch'" in _one_line_error(
        capsys, ["ted", "(A (B))", "(A (C))", "--variant", "nosuch"]
    )
    assert ">= 1" in _one_line_error(capsys, ["ted", "(A (B))", "(A (C))", "--depth", "-1"])
    missing = str(tmp_path / "missing.tsv")
    assert f"{missing}: no such file" in _one_line_error(capsys, ["metric", "bleu", missing])
    err = _one_line_error(capsys, ["paraphrase", "--model", str(tmp_path), "--input", missing])
    assert f"{missing}: no such file" in err
    err = _one_line_error(
        capsys, ["paraphrase", "--model", str(tmp_path), "--template", "(ROOT (S (NP dog) (VP)))"]
    )
    assert "has words ('dog')" in err


def test_score_checks_its_input_before_loading_a_parser(tmp_path, capsys, monkeypatch):
    import tempfile

    import paraamr.parsers.base as base

    monkeypatch.setattr(base, "make_parser", lambda *a, **k: pytest.fail("parser loaded"))
    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **k: made.append(real(**k)) or made[-1])
    err = _one_line_error(capsys, ["score", str(tmp_path / "missing.jsonl")])
    assert "missing.jsonl: no such file" in err and made == []


def test_score_failure_leaves_no_temp_folder(tmp_path, capsys, monkeypatch):
    import tempfile

    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nc\td\ne\tf\tg\th\n")  # line 3: a line the pairs reader refuses
    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **k: made.append(real(**k)) or made[-1])
    err = _one_line_error(capsys, ["score", str(bad), "--format", "pairs", "--parser", "gold"])
    # the input is checked whole before anything is made: no folder at all, the line named
    assert "bad.tsv:3:" in err and made == []


def test_top_stats_with_one_template(tmp_path, capsys):
    from paraamr.top.__main__ import main as top_main

    f = tmp_path / "one.seq"
    f.write_text("[IN:A x ]\n[IN:A y ]\n")
    top_main(["stats", "--train", str(f), "--no-out"])
    assert "slope: n/a" in capsys.readouterr().out


def test_top_parse_missing_model_is_one_line(tmp_path, capsys, monkeypatch):
    import io

    from paraamr.top.__main__ import main as top_main

    monkeypatch.setattr("sys.stdin", io.StringIO("hello\n"))
    with pytest.raises(SystemExit) as e:
        top_main(["parse", "--model", str(tmp_path / "nosuch")])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1 and "top_module.json" in err


def test_score_command_gold(tmp_path, capsys):
    f = tmp_path / "g.jsonl"
    f.write_text(
        json.dumps(
            {
                "text": "I know .",
                "text_parse": "(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))",
                "paraphrases": [
                    {"para_text": "Go .", "para_parse": "(ROOT (S (VP (VB Go)) (. .)))"}
                ],
            }
        )
        + "\n"
    )
    main(["score", str(f), "--parser", "gold", "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    row = json.loads(out[out.index("{\n") :])
    assert row["n_pairs"] == 1 and row["tedf"] == 3 and "parser:gold" in row["signature"]


def test_console_script_is_installed():
    """The ``paraamr`` command that ``pip install`` put next to the interpreter (not ``python -m``),
    importing this checkout's package."""
    import os
    from pathlib import Path

    exe = Path(sys.executable).parent / "paraamr"
    assert exe.is_file(), f"{exe} missing: install the project (make setup)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    run = lambda *a: subprocess.run(  # noqa: E731
        [str(exe), *a], capture_output=True, text=True, check=True, env=env
    )
    assert "ted" in run("--help").stdout and "score" in run("--help").stdout
    tree_a, tree_b = "(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))"
    assert (
        run("ted", tree_a, tree_b, "--depth", "3").stdout.strip() == "4"
    )  # the authors' TED-3 (issue 13)
    assert run("ted", tree_a, tree_b).stdout.strip() == "4"


def test_table1_bad_bytes_or_json_is_one_line_with_file_and_line(tmp_path, capsys):
    undecodable, bad_json = tmp_path / "bytes.jsonl", tmp_path / "json.jsonl"
    good = json.dumps({"text": "a b", "paraphrases": [{"para_text": "b a"}]})
    undecodable.write_bytes(good.encode() + b"\n\xff\xfe bad\n")
    bad_json.write_text(good + "\n" + good + "\n" + '{"text": "a"\n')
    err = _one_line_error(capsys, ["table1", str(undecodable)])
    assert "bytes.jsonl:2: undecodable bytes" in err and "--on-error skip" in err
    err = _one_line_error(capsys, ["table1", str(bad_json)])
    assert "json.jsonl:3: malformed JSON" in err
    main(["table1", str(bad_json), "--on-error", "skip", "--json"])  # good records counted
    assert json.loads(capsys.readouterr().out)["instances"] == 2


@pytest.mark.parametrize("value", ["-1", "x", "1.5"])
def test_limit_is_a_whole_number_from_0_checked_by_argparse(tmp_path, capsys, value):
    from paraamr.scpn import follow

    f = tmp_path / "p.tsv"
    f.write_text("a\tb\n")
    err = _one_line_error(capsys, ["score", str(f), "--limit", value])
    assert f"argument --limit: must be a whole number >= 0, got '{value}'" in err
    with pytest.raises(SystemExit) as e:
        follow.main(["--model", str(tmp_path), "--limit", value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument --limit: must be a whole number >= 0" in err


def test_unknown_model_offline_fails_at_once_in_one_line(tmp_path, capsys, monkeypatch):
    import time

    f = tmp_path / "p.tsv"
    f.write_text("I know.\tYou know.\n")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    err = _one_line_error(capsys, ["metric", "similarity", str(f), "--model", "nosuchmodel"])
    assert time.monotonic() - start < 10
    assert "model nosuchmodel: not a known model name" in err and "not a local folder" in err
    assert "the hub is offline (HF_HUB_OFFLINE=1)" in err


def test_a_folder_is_said_to_be_a_folder(tmp_path, capsys):
    for argv in (["score", f"{tmp_path}/"], ["metric", "bleu", str(tmp_path)],
                 ["table1", str(tmp_path)]):  # fmt: skip
        err = _one_line_error(capsys, argv)
        assert f"{tmp_path}" in err and "is a directory" in err and "no such file" not in err


def test_top_stats_bad_line_names_the_flag(tmp_path, capsys):
    from paraamr.top.__main__ import main as top_main

    f = tmp_path / "bad.seq"
    f.write_text("[IN:A x ]\n[IN:A y\n")
    err = _one_line_error(capsys, ["top", "stats", "--train", str(f), "--no-out"])
    assert "bad.seq:2:" in err and "--on-error skip" in err and "on_error=" not in err
    with pytest.raises(SystemExit):
        top_main(["stats", "--train", str(f), "--no-out"])
    err = capsys.readouterr().err
    assert "--on-error skip" in err and "on_error=" not in err


@pytest.mark.parametrize("argv", [["top"], ["top", "parse"], ["top", "stats"]])
def test_top_help_names_its_program_and_is_plain_text(capsys, argv):
    from paraamr.top.__main__ import main as top_main

    with pytest.raises(SystemExit) as e:
        main([*argv, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and out.startswith(f"usage: paraamr {' '.join(argv)} ")
    assert "python -m" not in out and not re.search(r"``|:(func|meth|class|data):", out)
    with pytest.raises(SystemExit):
        top_main([*argv[1:], "--help"])
    assert capsys.readouterr().out.startswith("usage: python -m paraamr.top")


def test_top_parse_help_says_how_it_tokenizes(capsys):
    with pytest.raises(SystemExit):
        main(["top", "parse", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert '"hereford?" is "hereford ?"' in out and "--pretokenized" in out


EMPTY_INPUT = [
    (["metric", "bleu", "{f}"], "pairs"),
    (["metric", "iou", "{f}"], "pairs"),
    (["score", "{f}", "--parser", "gold"], "pairs"),
    (["table1", "{f}"], "pairs"),
    (["humaneval", "sample", "A={f}", "B={good}", "--out", "{d}/kit"], "pairs"),
    (["humaneval", "examples", "A={good}", "B={f}", "--no-metrics", "--out", "{d}/x.md"], "pairs"),
    (["top", "stats", "--train", "{f}", "--no-out"], "trees"),
    (["top", "parse", "--model", "{d}", "--input", "{f}"], "utterances"),
]


@pytest.mark.parametrize("argv,what", EMPTY_INPUT, ids=[" ".join(a[:2]) for a, _ in EMPTY_INPUT])
@pytest.mark.parametrize("content", ["", "\n  \n"], ids=["empty", "blank"])
def test_empty_input_is_one_line_naming_the_file(tmp_path, capsys, argv, what, content):
    f, good = tmp_path / "empty.tsv", tmp_path / "good.tsv"
    f.write_text(content)
    good.write_text("A cat.\tOne cat.\n")
    argv = [a.format(f=f, good=good, d=tmp_path) for a in argv]
    err = _one_line_error(capsys, argv)
    assert err.endswith(f"error: {f}: no {what} (empty input)"), err


def test_empty_stdin_and_all_skipped_are_no_pairs(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert "<stdin>: no pairs (empty input)" in _one_line_error(capsys, ["metric", "bleu"])
    f = tmp_path / "bad.tsv"
    f.write_text("one column\nstill one\n")
    err = _one_line_error(capsys, ["score", str(f), "--on-error", "skip", "--parser", "gold"])
    assert err.endswith(f"{f}: no pairs (2 bad records skipped)")


@pytest.mark.parametrize(
    "argv",
    [
        ["paraphrase", "--model", "m", "--beams", "0"],
        ["paraphrase", "--model", "m", "--batch-size", "-2"],
        ["paraphrase", "--model", "m", "--num-shards", "0"],
        ["build-merge", "--out", "o", "--num-shards", "0"],
        ["top", "parse", "--model", "m", "--beams", "0"],
        ["top", "stats", "--train", "t", "--top-k", "0"],
    ],
    ids=" ".join,
)
def test_counts_are_whole_numbers_from_1_checked_by_argparse(capsys, argv):
    from paraamr.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "must be a whole number >= 1" in err and "Traceback" not in err


def test_sources_are_distinct_in_first_seen_order(tmp_path, capsys):
    p = tmp_path / "c.tsv"
    p.write_text("B  cat.\tOne cat.\nB cat.\tThe cat.\nA dog.\tHound.\nB cat.\tAgain.\n")
    main(["sources", str(p), "--format", "pairs"])
    out = capsys.readouterr()
    assert out.out == "B cat.\nA dog.\n"  # whitespace collapsed, repeats once, input order
    assert "2 distinct source sentences" in out.err


def test_sources_of_parabank_eval_are_its_400_references(data_dir, capsys):
    import csv

    refs = data_dir / "paraphrase" / "parabank-eval"
    with open(refs / "ref.tsv", newline="", encoding="utf-8") as fh:  # quoted TSV, read by csv
        want = [" ".join(r["ref_sent"].split()) for r in csv.DictReader(fh, delimiter="\t")]
    main(["sources", str(refs), "--format", "parabank-eval-parabank1"])
    got = capsys.readouterr().out.splitlines()
    assert len(want) == 400 and sorted(got) == sorted(want)


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """``paraamr sources … | head -1``: the closed pipe ends the command with status 141 (as a
    command killed by SIGPIPE), with no BrokenPipeError traceback on stderr."""
    import os
    from pathlib import Path

    p = tmp_path / "c.tsv"  # ~300 kB of distinct sources: more than a pipe holds
    p.write_text("".join(f"source sentence number {i} of many.\tp.\n" for i in range(8000)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "paraamr.cli", "sources", str(p), "--format", "pairs"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout.readline() == b"source sentence number 0 of many.\n"
    proc.stdout.close()  # the reader goes away with the writer blocked on a full pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_version_is_the_installed_distributions(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"paraamr {version('paraamr')}"


def test_table1_prints_markdown_or_with_json_only_json(tmp_path, capsys):
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"text": "a b c", "paraphrases": [{"para_text": "c b a"}]}) + "\n")
    main(["table1", str(f)])
    md = capsys.readouterr().out
    assert md.lstrip().startswith("#") and "{" not in md
    main(["table1", str(f), "--json"])
    assert json.loads(capsys.readouterr().out)["instances"] == 1


def test_paired_on_a_missing_run_folder_names_the_folder(tmp_path, capsys):
    err = _one_line_error(capsys, ["paired", str(tmp_path / "nosuch"), "A", "B"])
    assert f"{tmp_path / 'nosuch'}: no such folder" in err and "corpus" not in err


def test_a_ted_variant_answers_to_the_name_its_signature_prints(capsys):
    from paraamr.metrics.ted import VARIANTS

    a, b = "(ROOT (S (NP (PRP I)) (VP (VBP know))))", "(ROOT (S (VP (VB go)) (. .)))"
    for name, v in VARIANTS.items():
        main(["ted", a, b, "--depth", "3", "--variant", name])
        main(["ted", a, b, "--depth", "3", "--variant", v.describe()])  # e.g. paraamr-v2
        by_name, by_signature = capsys.readouterr().out.split()
        assert by_name == by_signature


def test_score_checks_the_whole_input_before_any_model_loads(tmp_path, capsys, monkeypatch):
    import paraamr.metrics.semantic as semantic
    import paraamr.parsers.base as base

    monkeypatch.setattr(base, "make_parser", lambda *a, **k: pytest.fail("parser loaded"))
    monkeypatch.setattr(semantic, "load_encoder", lambda *a, **k: pytest.fail("encoder loaded"))
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"text": "a", "paraphrases": [{"para_text": "b"}]}) + "\n{bad\n")
    assert "c.jsonl:2: malformed JSON" in _one_line_error(capsys, ["score", str(f)])


def test_score_out_writes_the_metrics_beside_the_shards(tmp_path, capsys):
    f = tmp_path / "g.jsonl"
    rec = {
        "text": "I know .",
        "text_parse": "(ROOT (S (NP (PRP I)) (VP (VBP know)) (. .)))",
        "paraphrases": [{"para_text": "Go .", "para_parse": "(ROOT (S (VP (VB Go)) (. .)))"}],
    }
    f.write_text(json.dumps(rec) + "\n")
    out = tmp_path / "o"
    main(["score", str(f), "--parser", "gold", "--out", str(out)])
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "score.json").read_text())
    assert saved == printed and saved["tedf"] == 3 and saved["n_pairs"] == 1
    assert "3.00" in (out / "score.md").read_text()


def test_every_score_option_has_plain_help(capsys):
    from paraamr.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "cmd")
    score = sub.choices["score"]
    assert all(a.help for a in score._actions), [a.dest for a in score._actions if not a.help]
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "``" not in capsys.readouterr().out


def test_make_help_has_no_colour_codes_in_a_pipe():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["make", "-s", "help"], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0 and "table2" in out.stdout and "\033" not in out.stdout


def test_amr_with_a_missing_model_says_how_to_get_one_before_torch_loads(tmp_path):
    """A missing model folder is a one-line error naming ``make amr-model``, given before torch
    is imported (torch alone takes seconds to load)."""
    src = tmp_path / "s.txt"
    src.write_text("The boy wants to go.\n")
    code = (
        "import sys\nfrom paraamr.cli import main\n"
        f"try: main(['amr', 'parse', '--model', {str(tmp_path / 'nosuch')!r}, '--input', "
        f"{str(src)!r}])\nexcept SystemExit as e: print('exit', e.code)\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["exit", "2", "False"], out.stderr
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1 and "no such model dir" in err and "make amr-model" in err


def test_amr_generate_with_no_graph_that_decodes_stops_before_torch_loads(tmp_path):
    """A file of broken graphs is one line naming its first bad block, before the model (and
    torch) load; it took 11.5 s to load the model for nothing before."""
    from paraamr.amrlm import AMR_MODULE_FILE

    model = tmp_path / "model"
    model.mkdir()
    (model / AMR_MODULE_FILE).write_text("{}")  # a model folder that would load only later
    bad = tmp_path / "g.amr"
    bad.write_text("(a / b\n")
    code = (
        "import sys\nfrom paraamr.cli import main\n"
        f"try: main(['amr', 'generate', '--model', {str(model)!r}, '--input', {str(bad)!r}])\n"
        "except SystemExit as e: print('exit', e.code)\nprint('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["exit", "2", "False"], out.stderr
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1 and f"{bad}: none of its 1 graphs decodes" in err


def test_metric_prints_percent_as_score_does_never_e_notation(tmp_path, capsys):
    """BLEU and IoU per line in percent, two decimals (score and Table 2 report 100 minus them):
    by hand, a pair against itself is BLEU 100 and IoU 100; 'a dog barks loudly .' against
    'birds sing .' shares no 4-gram (nltk's BLEU is ~1e-155 there, printed 0.00) and one token
    of seven (IoU 14.29)."""
    f = tmp_path / "p.tsv"
    f.write_text("The cat sat on the mat .\tThe cat sat on the mat .\n"
                 "A dog barks loudly .\tBirds sing .\n")  # fmt: skip
    main(["metric", "bleu", str(f)])
    out = capsys.readouterr()
    assert out.out.split() == ["100.00", "0.00"] and "mean\t50.00" in out.err
    main(["metric", "iou", str(f)])
    assert capsys.readouterr().out.split() == ["100.00", "14.29"]
