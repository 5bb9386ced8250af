import json
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
    assert out.out.split() == ["4", "0"] and "mean\t2.0" in out.err


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
    assert "invalid choice: 'nosuch'" in _one_line_error(
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
    from pathlib import Path

    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\td\n")  # not a corpus format the reader accepts
    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **k: made.append(real(**k)) or made[-1])
    _one_line_error(capsys, ["score", str(bad), "--format", "pairs", "--parser", "gold"])
    assert made and not Path(made[0]).exists()


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
