"""The downstream comparison: common sources, one policy, controls, signatures, reuse, errors."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from paraamr.compare.plan import finished, prepare, run_job
from paraamr.compare.policy import Policy
from paraamr.compare.sets import build_sets, derangement, read_common
from paraamr.corpus.specs import CorpusSpec
from paraamr.corpus.subset import common_subset
from paraamr.errors import ConfigError, DataNotFoundError
from paraamr.results import JobResult

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def three(tmp_path) -> list[CorpusSpec]:
    """Three small corpora in three formats; by hand, the sources all three share (case and
    spaces aside, each with a paraphrase other than itself) are 'a cat sat.', 'dogs run.' and
    'birds fly high.'."""
    a = _write(
        tmp_path / "a.jsonl",
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {
                    "text": "A cat sat.",
                    "paraphrases": [
                        {"para_text": "A cat was sitting.", "perplexity": 1},
                        {"para_text": "The cat sat down.", "perplexity": 1},
                        {"para_text": "a cat sat.", "perplexity": 1},
                    ],
                },
                {
                    "text": "Dogs run.",
                    "paraphrases": [
                        {"para_text": "Dogs are running.", "perplexity": 1},
                        {"para_text": "Hounds run.", "perplexity": 1},
                        {"para_text": "Dogs sprint.", "perplexity": 1},
                    ],
                },
                {
                    "text": "Birds fly high.",
                    "paraphrases": [{"para_text": "Birds soar.", "perplexity": 1}],
                },
                {
                    "text": "Only in A.",
                    "paraphrases": [{"para_text": "Just in A.", "perplexity": 1}],
                },
                {
                    "text": "Fish swim.",
                    "paraphrases": [{"para_text": "fish swim.", "perplexity": 1}],
                },
            ]
        ),
    )
    b = _write(
        tmp_path / "b.tsv",
        "a  cat sat.\tA feline sat.\nDogs run.\tCanines run.\n"
        "Birds fly high.\tHigh fly the birds.\nFish swim.\tFishes are swimming.\n",
    )
    c = _write(
        tmp_path / "c.tsv",
        "A cat sat.\tThe cat is seated.\nDogs run.\tDogs go fast.\n"
        "Birds fly high.\tBirds go up.\nBirds fly high.\tUp fly birds.\n"
        "Fish swim.\tFish are swimming.\nOnly in C.\tSolely in C.\n",
    )
    return [CorpusSpec("A", a, "paraamr"), CorpusSpec("B", b, "pairs"), CorpusSpec("C", c, "pairs")]


HAND_COMMON = {"a cat sat.", "dogs run.", "birds fly high."}


def test_common_sources_are_table2s_subset_on_a_hand_example(three):
    common = read_common(three, lowercase=True, progress=False)
    texts = {" ".join(common.rows["A"][int(k)][0].lower().split()) for k in common.keys}
    assert texts == HAND_COMMON
    # the very keys Table 2 compares on
    assert (
        common.keys.tolist() == common_subset(three, progress=False, lowercase_keys=True).tolist()
    )
    for name in "ABC":
        assert set(common.rows[name]) == set(int(k) for k in common.keys)


def _sources(rows) -> list[str]:
    return [src for src, _ in rows]


def test_every_row_gets_the_same_sources_dev_sources_and_equal_pairs(three):
    common = read_common(three, lowercase=True, progress=False)
    policy = Policy(max_paraphrases_per_source=None, lm="none", dev_sources=1, equal_pairs=True)
    built = build_sets(common, policy, ["table5"], controls=["shuffled"])
    sets = built["sets"]["table5"]
    assert set(sets) == {"A", "B", "C", "shuffled"}
    devs = {name: _sources(r["dev"]) for name, r in sets.items()}
    assert len({tuple(d) for d in devs.values()}) == 1 and len(devs["A"]) == 1
    dev = devs["A"][0]
    for r in sets.values():
        assert dev not in _sources(r["train"])
    # by hand: whichever source is dev, B holds 1 pair per training source, 2 in all, the
    # fewest of any row; so equal pairs gives every row 2, and drops the rest
    assert {name: r["counts"].train_pairs for name, r in sets.items()} == dict.fromkeys(sets, 2)
    unequal = build_sets(
        common,
        Policy(max_paraphrases_per_source=None, lm="none", dev_sources=1),
        ["table5"],
        controls=["shuffled"],
    )
    for name, r in unequal["sets"]["table5"].items():
        assert r["counts"].train_pairs - 2 == sets[name]["counts"].dropped_equal_pairs
    assert unequal["sets"]["table5"]["B"]["counts"].train_pairs == 2


def test_without_equal_pairs_the_cap_draws_at_most_k_per_source(three):
    common = read_common(three, lowercase=True, progress=False)
    built = build_sets(
        common, Policy(max_paraphrases_per_source=1, lm="none", dev_sources=0), ["table5"]
    )
    a = built["sets"]["table5"]["A"]
    assert [len(p) for _, p in a["train"]] == [1, 1, 1]
    # 'a cat sat.' repeats its source (dropped as identical); the cap drops the rest but one
    assert a["counts"].dropped_identical == 1
    assert a["counts"].dropped_cap == (2 - 1) + (3 - 1)


def test_every_corpus_is_scored_by_the_one_lm_whatever_it_carried(three, tmp_path):
    calls = []

    def length_ppl(texts):  # an LM stand-in: perplexity = characters
        calls.append(list(texts))
        return [float(len(t)) for t in texts]

    cfg = {
        "out_dir": str(tmp_path / "out"),
        "tasks": ["table5"],
        "seeds": [0],
        "corpora": " ".join(f"{s.name}={s.path}:{s.fmt}" for s in three),
        "controls": [],
        "policy": {
            "max_paraphrases_per_source": None,
            "lm": "tiny",
            "dev_sources": 0,
            "max_perplexity": {"table5": 12},
        },
    }
    plan = prepare(cfg, scorer=length_ppl)
    assert len(calls) == 1  # one call, every row's paraphrases together
    for row in ("A", "B", "C"):
        path = plan["tasks"]["table5"]["sets"][row]["path"]
        recs = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines()]
        paras = [p for r in recs for p in r["paraphrases"]]
        assert paras and all(p["perplexity"] == len(p["para_text"]) <= 12 for p in paras)
    # A carried perplexity 1 everywhere: under the one LM its long paraphrases are dropped
    counts = plan["tasks"]["table5"]["sets"]["A"]["counts"]
    assert counts["dropped_perplexity"] == len(
        [
            t
            for t in calls[0]
            if len(t) > 12
            and t
            in {
                "a cat was sitting.",
                "the cat sat down.",
                "dogs are running.",
                "hounds run.",
                "dogs sprint.",
                "birds soar.",
            }
        ]
    )
    assert counts["dropped_perplexity"] == 3 and counts["scored"] == 6


def test_the_shuffled_control_pairs_no_source_with_its_own_paraphrase(data_dir, tmp_path):
    d = data_dir / "paraphrase" / "parabank-eval"
    specs = [
        CorpusSpec("ParaNMT", str(d), "parabank-eval-paranmt"),
        CorpusSpec("ParaBank1", str(d), "parabank-eval-parabank1"),
    ]
    common = read_common(specs, lowercase=True, progress=False)
    policy = Policy(max_paraphrases_per_source=None, lm="none", dev_sources=0, seed=3)
    built = build_sets(common, policy, ["table5"], controls=["shuffled"], control_from="ParaBank1")
    own = {src: set(ps) for src, ps in built["sets"]["table5"]["ParaBank1"]["train"]}
    shuffled = built["sets"]["table5"]["shuffled"]["train"]
    assert len(shuffled) >= 380
    assert not any(set(ps) & own.get(src, set()) for src, ps in shuffled)
    # and the control keeps the real corpus's pairs, only moved: the same multiset of paraphrases
    assert sorted(p for _, ps in shuffled for p in ps) == sorted(
        p for ps in own.values() for p in ps
    )


def test_derangements_have_no_fixed_point():
    rng = random.Random(0)
    for n in range(2, 40):
        perm = derangement(n, rng)
        assert sorted(perm) == list(range(n)) and all(perm[i] != i for i in range(n))


@pytest.mark.parametrize("n", [12, 50])
def test_holding_out_every_shared_source_is_refused_with_the_setting_to_change(n):
    """12 shared sources (a user's small build) and the default 50 dev sources, or all 12:
    nothing would be left to train on; the message names the setting and how to pass it."""
    import numpy as np

    from paraamr.compare.sets import dev_keys

    keys = np.arange(12, dtype=np.uint64)
    with pytest.raises(ConfigError) as e:
        dev_keys(keys, n, 0)
    msg = str(e.value)
    assert f"policy.dev_sources={n}" in msg and "(12)" in msg and "COMPARE_ARGS" in msg
    assert len(dev_keys(keys, 11, 0)) == 11 and dev_keys(keys, 0, 0) == set()


def _cfg(three, out, **policy):
    return {
        "out_dir": str(out),
        "tasks": ["table5"],
        "seeds": [0, 1],
        "controls": ["shuffled"],
        "corpora": " ".join(f"{s.name}={s.path}:{s.fmt}" for s in three),
        "policy": {"lm": "none", "dev_sources": 1, **policy},
        "task_overrides": {"table5": ["trainer.max_steps=2"]},
    }


@pytest.mark.parametrize(
    "setting",
    [
        {"lowercase": False, "dev_sources": 0},
        {"max_paraphrases_per_source": 1},
        {"equal_pairs": True},
        {"dev_sources": 0},
        {"seed": 1},
        {"lm": "other", "max_perplexity": {"table5": 1e9}},
    ],
)
def test_a_policy_change_gets_another_signature_and_folder(three, tmp_path, setting):
    base = prepare(_cfg(three, tmp_path / "a"), scorer=lambda xs: [1.0] * len(xs))
    other = prepare(_cfg(three, tmp_path / "a", **setting), scorer=lambda xs: [1.0] * len(xs))
    assert base["tasks"]["table5"]["signature"] != other["tasks"]["table5"]["signature"]
    assert base["jobs"][1]["run_dir"] != other["jobs"][1]["run_dir"]
    assert base["jobs"][1]["key"] != other["jobs"][1]["key"]


def _fake_run(calls):
    def run(task, cfg):
        calls.append(cfg["out_dir"])
        rec = JobResult(
            "simcse",
            cfg["seed"],
            f"model:x|seed:{cfg['seed']}",
            {"corpus": "r", "sts": {"avg": {"spearman": 1.0, "pearson": 1.0}}},
        )
        rec.write(cfg["out_dir"])
        return rec.to_dict()

    return run


def _compose(task, overrides):
    kv = dict(o.split("=", 1) for o in overrides)
    return {"out_dir": kv["out_dir"], "seed": int(kv["seed"])}


def test_a_finished_job_is_reused_and_a_changed_one_is_not(three, tmp_path):
    plan = prepare(_cfg(three, tmp_path / "o"))
    calls: list[str] = []
    first = run_job(plan, 1, _compose, _fake_run(calls))
    assert finished(plan["jobs"][1]) and len(calls) == 1
    assert "policy.cap:5" in first["signature"] and "set:" in first["signature"]
    again = run_job(plan, 1, _compose, _fake_run(calls))
    assert len(calls) == 1 and again["signature"] == first["signature"]
    # a corpus changed on disk: the same folder, another training set, so another key
    Path(three[0].path).write_text(
        Path(three[0].path)
        .read_text()
        .replace("Hounds", "Wolves")
        .replace("Birds soar", "Birds rise")
    )
    plan2 = prepare(_cfg(three, tmp_path / "o"))
    job = next(j for j in plan2["jobs"] if j["row"] == plan["jobs"][1]["row"] and j["seed"] == 0)
    assert job["run_dir"] == plan["jobs"][1]["run_dir"] and job["key"] != plan["jobs"][1]["key"]
    assert not finished(job)
    run_job(plan2, plan2["jobs"].index(job), _compose, _fake_run(calls))
    assert len(calls) == 2 and finished(job)


def test_fewer_than_two_rows_or_a_missing_file_is_refused_before_reading(three, tmp_path):
    with pytest.raises(ConfigError, match="table7 augments with the comparison's own Table 6"):
        prepare({**_cfg(three, tmp_path), "tasks": ["table5", "table7"]})
    with pytest.raises(ConfigError, match="at least two rows"):
        prepare({**_cfg(three[:1], tmp_path), "controls": []})
    with pytest.raises(DataNotFoundError, match="corpus B: No such file"):
        prepare(_cfg([three[0], CorpusSpec("B", str(tmp_path / "nope.tsv"), "pairs")], tmp_path))


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ['corpora="A=data:paraphrase/parabank-eval:parabank-eval-paranmt"', "controls=[]"],
            "at least two rows",
        ),
        (['corpora="A=/no/such.jsonl"'], "corpus A: No such file or directory: /no/such.jsonl"),
    ],
)
def test_the_entry_point_says_one_line_before_any_model_loads(tmp_path, args, message):
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "compare.py"), *args, f"out_dir={tmp_path}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("compare.py: error:")
    assert time.perf_counter() - t0 < 30 and not (tmp_path / "plan.json").exists()


@pytest.mark.slow
def test_a_whole_comparison_runs_its_jobs_as_a_multirun_and_reuses_them(tmp_path):
    """``experiments/compare.py`` end to end on ParaBank-Eval's two corpora and the shuffled
    control (MiniLM, 2 steps, a 30-pair STS sample): the plan, 3 jobs run by a Hydra multirun,
    the report; run again, every job is reused and the numbers stay."""
    args = [sys.executable, str(ROOT / "experiments" / "compare.py"),
            'corpora="ParaNMT=data:paraphrase/parabank-eval:parabank-eval-paranmt '
            'ParaBank1=data:paraphrase/parabank-eval:parabank-eval-parabank1"',
            f"out_dir={tmp_path}", "seeds=1", "untrained=false", "progress=false", "table2=false",
            'task_overrides.table5=["trainer.max_steps=2","callbacks.sts_dev.every_n_steps=2",'
            '"callbacks.sts_dev.limit_pairs=32","sts.max_pairs_per_set=30","data.batch_size=8",'
            '"trainer.enable_progress_bar=false"]']  # fmt: skip
    first = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert first.returncode == 0, first.stderr[-2000:]
    report = json.loads((tmp_path / "compare.json").read_text())
    rows = {r["row"]: r for r in report["tasks"]["table5"]["rows"]}
    assert set(rows) == {"ParaNMT", "ParaBank1", "shuffled"}
    assert all(r["n_seeds"] == 1 and len(r["spearman_per_seed"]) == 1 for r in rows.values())
    assert report["tasks"]["table5"]["verdict"]["can_compare"] is None  # one seed: untested
    assert "policy.cap:5" in rows["ParaBank1"]["signature"]
    again = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0 and (again.stdout + again.stderr).count("reused") == 3
    report2 = json.loads((tmp_path / "compare.json").read_text())
    assert report2["tasks"]["table5"]["rows"] == report["tasks"]["table5"]["rows"]
    assert (tmp_path / "compare.md").is_file() and (tmp_path / "compare.png").is_file()


def test_every_task_job_composes_on_its_rows_training_set(three, tmp_path):
    """The plan's overrides are valid for each task's own entry point config: the job trains on
    the row's training set with the task's filters off, and Table 6 takes the shared dev
    sources (written last in every set) as its dev."""
    from paraamr.compare.run import compose_task

    tasks = ["table5", "table6", "table7"]
    cfg = {**_cfg(three, tmp_path), "tasks": tasks, "task_overrides": {}}
    plan = prepare(cfg)
    table6 = {(j["row"], j["seed"]): j for j in plan["jobs"] if j["task"] == "table6"}
    for job in plan["jobs"]:
        c = compose_task(job["task"], job["overrides"])
        assert c.seed == job["seed"] and c.out_dir == job["run_dir"]
        if job["task"] == "table7":  # Table 7 takes the same row's and seed's Table 6 model
            if job["row"] == "no-augmentation":
                assert c.augment.kind == "none"
                continue
            model = table6[(job["row"], job["seed"])]
            assert c.augment.paraphraser.model == model["run_dir"] + "/best_model"
            assert c.augment.corpus == job["row"] and job["set_sha256"] == model["key"]
            continue
        if job["row"] == "untrained":
            assert c.corpus == "none"
            continue
        assert c.data.path == plan["tasks"][job["task"]]["sets"][job["row"]]["path"]
        assert c.data.format == "paraamr" and c.data.max_perplexity is None
        if job["task"] == "table6":
            assert c.data.dev_sources == plan["dev_sources"] == 1 and c.data.max_paraphrases is None
            lines = Path(c.data.path).read_text().splitlines()
            dev_src = json.loads(lines[-1])["text"]
            assert dev_src not in [json.loads(x)["text"] for x in lines[:-1]]
        else:
            assert c.data.max_paraphrases_per_source is None


def test_the_policy_lm_scores_a_corpus_that_carried_no_perplexity(three, tmp_path, tiny_gpt2):
    """The real scorer path: a named LM (a tiny GPT-2 in the real on-disk format) scores every
    paraphrase of the TSV corpora; the written values are that LM's own perplexities."""
    from paraamr.lms import load_scorer

    cfg = {**_cfg(three, tmp_path), "controls": []}
    cfg["policy"] = {"lm": tiny_gpt2, "dev_sources": 0, "max_perplexity": {"table5": 1e9}}
    plan = prepare(cfg)
    path = Path(plan["tasks"]["table5"]["sets"]["B"]["path"])
    recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    texts = [p["para_text"] for r in recs for p in r["paraphrases"]]
    want = load_scorer(tiny_gpt2).perplexities(texts)
    got = [p["perplexity"] for r in recs for p in r["paraphrases"]]
    assert texts and got == pytest.approx(want, rel=1e-3)
    assert plan["lm"].startswith("ppl(") and tiny_gpt2 in plan["tasks"]["table5"]["signature"]
