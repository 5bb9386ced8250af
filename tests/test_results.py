"""The one job-result record (:mod:`paraamr.results`) and that every table job writes it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from paraamr.errors import DataNotFoundError, InputError
from paraamr.results import HEADER, JOBS, RESULT_FILE, JobResult, read_results

PKG = Path(__file__).resolve().parents[1] / "paraamr"


def test_the_file_is_the_header_the_fields_in_order_then_files_time_machine(tmp_path):
    stamp = {"date": "2026-12-05", "cpu": "X", "cores": 2}
    path = JobResult("scpn", 3, "model:m|seed:3", {"corpus": "A", "tests": {"q": {"bleu": 1.5}}},
                     {"model": tmp_path / "m"}, 12.345, stamp).write(tmp_path / "run")  # fmt: skip
    assert path == tmp_path / "run" / "results.json"
    text = path.read_text(encoding="utf-8")
    assert list(json.loads(text)) == ["job", "seed", "signature", "corpus", "tests", "files",
                                      "seconds", "measured"]  # fmt: skip
    assert json.loads(text) == {
        "job": "scpn", "seed": 3, "signature": "model:m|seed:3", "corpus": "A",
        "tests": {"q": {"bleu": 1.5}}, "files": {"model": str(tmp_path / "m")},
        "seconds": 12.3, "measured": stamp,
    }  # fmt: skip
    assert not list((tmp_path / "run").glob("*.tmp*"))  # written atomically: no leftovers


def test_a_record_stamps_the_machine_unless_told(tmp_path):
    from paraamr.utils import cpu_model

    r = read_results(JobResult("top", 0, "s", {}).write(tmp_path))[0]
    assert r["measured"]["cpu"] == cpu_model() and r["seconds"] is None


@pytest.mark.parametrize("key", HEADER)
def test_a_job_field_may_not_hide_the_header(key):
    with pytest.raises(ValueError, match=key):
        JobResult("simcse", 0, "s", {key: 1})


def test_an_unknown_job_is_refused():
    with pytest.raises(ValueError, match="simcse"):
        JobResult("nope", 0, "s", {})
    with pytest.raises(ValueError, match="simcse"):
        read_results(".", "nope")


def test_the_reader_finds_every_record_in_path_order_and_filters_by_job(tmp_path):
    JobResult("simcse", 1, "s1", {"corpus": "B"}).write(tmp_path / "b" / "1")
    JobResult("simcse", 0, "s0", {"corpus": "A"}).write(tmp_path / "a")
    JobResult("fewshot", 0, "f", {"task": "mrpc"}).write(tmp_path / "c")
    (tmp_path / "a" / "other.json").write_text("{}")  # not a record's name: not read
    got = read_results(tmp_path)
    assert [(r["job"], r["signature"]) for r in got] == [("simcse", "s0"), ("simcse", "s1"),
                                                         ("fewshot", "f")]  # fmt: skip
    assert [r["corpus"] for r in read_results(tmp_path, "simcse")] == ["A", "B"]
    assert [r["run_dir"] for r in read_results(tmp_path, "fewshot")] == [str(tmp_path / "c")]
    one = tmp_path / "a" / RESULT_FILE
    assert [r["corpus"] for r in read_results(one)] == ["A"]  # one file, as the TOP gatherer


def test_no_record_names_the_folder_the_job_and_its_table(tmp_path):
    with pytest.raises(DataNotFoundError, match=f"{tmp_path}: no results.json of a top job"):
        read_results(tmp_path, "top")
    JobResult("simcse", 0, "s", {}).write(tmp_path)
    with pytest.raises(DataNotFoundError, match="Table 7"):
        read_results(tmp_path, "fewshot")
    with pytest.raises(DataNotFoundError, match="no such folder"):
        read_results(tmp_path / "missing")


def test_a_broken_or_old_file_is_one_line_naming_it(tmp_path):
    bad = tmp_path / "x" / RESULT_FILE
    bad.parent.mkdir()
    bad.write_text('{\n "job": "simcse",\n "seed": \n}')
    with pytest.raises(InputError, match=rf"{bad}:4: not a job result \(bad JSON"):
        read_results(tmp_path)
    bad.write_text(json.dumps({"corpus": "A", "seed": 0, "sts": {}}))  # before the header
    with pytest.raises(InputError, match=rf"{bad}: not a job result \(no job, signature\)"):
        read_results(tmp_path)
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="not a job result"):
        read_results(tmp_path)


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)}  # fmt: skip


@pytest.mark.parametrize(
    ("job", "module"),
    [("simcse", "simcse/job.py"), ("scpn", "scpn/job.py"), ("fewshot", "fewshot/job.py"),
     ("top", "top/pipeline.py")],
)  # fmt: skip
def test_every_table_job_writes_the_record_and_no_file_of_its_own(job, module):
    source = (PKG / module).read_text(encoding="utf-8")
    assert "JobResult" in _calls(PKG / module) and f'JobResult("{job}"' in source
    assert 'results.json", ' not in source and "write_json_atomic(out /" not in source
    assert job in JOBS


def test_no_result_file_is_named_outside_the_record():
    """The old per-job names are gone from the library and the gatherers."""
    root = PKG.parent
    for folder in ("paraamr", "analysis"):
        for p in (root / folder).rglob("*.py"):
            text = p.read_text(encoding="utf-8")
            assert "top.json" not in text, p
            if "amrlm" not in p.parts:  # the AMR training's scores: two models, no table
                assert '"scores.json"' not in text, p
