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
        main(["metric", "iou", str(f)])


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
