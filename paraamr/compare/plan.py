"""A comparison's plan: the training sets written once, and one job per task × row × seed.

:func:`prepare` reads the corpora, builds every row's training sets under the policy
(:mod:`paraamr.compare.sets`), writes them under ``OUT/sets/<task>/<row>.jsonl`` and the plan
``OUT/plan.json``: the policy and its signature per task, what each step kept, and the jobs.
A job is a task's own entry point config (``conf/table5.yaml``, ``conf/table6.yaml``) with
overrides that point it at its row's training set; its key names everything that shapes its
numbers (task, row, seed, the training set's sha256, the policy, the overrides), so
:func:`run_job` reuses a finished job only when its key matches, and reruns it otherwise.

>>> job_key({"task": "table5", "row": "A", "seed": 0, "set_sha256": "ab", "overrides": ["x=1"]},
...         "cap:5") == job_key({"task": "table5", "row": "A", "seed": 0, "set_sha256": "ab",
...                              "overrides": ["x=1"]}, "cap:4")
False
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from paraamr.compare.policy import SET_TASKS, TASKS, Policy
from paraamr.compare.sets import (
    build_sets,
    check_rows,
    keys_digest,
    read_common,
    write_set,
)
from paraamr.corpus.specs import in_data_dir, parse_corpus_specs, with_built_runs
from paraamr.errors import ConfigError, DataNotFoundError
from paraamr.results import RESULT_FILE
from paraamr.signature import Signature
from paraamr.utils import write_json_atomic

__all__ = [
    "PLAN_FILE",
    "UNTRAINED",
    "job_key",
    "setting_digest",
    "seed_list",
    "task_overrides",
    "prepare",
    "read_plan",
    "finished",
    "run_job",
]

log = logging.getLogger(__name__)

PLAN_FILE = "plan.json"
JOB_FILE = "compare_job.json"
#: the Table 5 row of the base encoder before any training (how far training moves STS)
UNTRAINED = "untrained"


def job_key(job: Mapping[str, Any], policy_signature: str) -> str:
    """16 hex digits naming everything that shapes a job's numbers."""
    text = json.dumps(
        [
            job["task"],
            job["row"],
            job["seed"],
            job.get("set_sha256"),
            sorted(job["overrides"]),
            policy_signature,
        ],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def setting_digest(policy_signature: str, overrides: Sequence[str]) -> str:
    """8 hex digits naming a task's policy and its own overrides: the folder its jobs run in
    (``OUT/runs/<task>/<digest>/<row>/seed<N>``), so a changed setting never reuses or
    overwrites the runs of another.

    >>> setting_digest("cap:5", ["a=1"]) != setting_digest("cap:4", ["a=1"])
    True
    """
    text = json.dumps([policy_signature, sorted(overrides)])
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def seed_list(seeds: int | Sequence[int]) -> list[int]:
    """Seeds from a count (``3``: 0, 1, 2) or a list.

    >>> seed_list(3), seed_list([4, 7])
    ([0, 1, 2], [4, 7])
    """
    if isinstance(seeds, int):
        if seeds < 1:
            raise ConfigError(f"seeds={seeds}: a count must be >= 1 (or give a list)")
        return list(range(seeds))
    return [int(s) for s in seeds]


def task_overrides(
    task: str, row: str, set_path: str | None, n_dev: int, seed: int, run_dir: str, group: str
) -> list[str]:
    """The overrides that point ``task``'s entry point config at one row's training set (the
    policy already filtered and capped it, so the task's own filters are switched off)."""
    common = [f"seed={seed}", f"out_dir={run_dir}", f"logger.wandb.group={group}"]
    if set_path is None:  # the untrained base
        return ["train_corpus=none", *common]
    data = [
        "train_corpus=custom",
        f"corpus={row}",
        f"data.path={set_path}",
        "data.format=paraamr",
        "data.max_perplexity=null",
    ]
    if task == "table5":
        return [*data, "data.max_paraphrases_per_source=null", *common]
    if task == "table6":
        if n_dev < 1:
            raise ConfigError("table6 needs dev sources: set policy.dev_sources >= 1")
        return [*data, "data.max_paraphrases=null", f"data.dev_sources={n_dev}", *common]
    raise ConfigError(f"unknown task {task!r}; known: {', '.join(TASKS)}")


def _scorer(policy: Policy, cache_dir: Path, batch_size: int):
    """``(score texts, LM label)`` of the policy's one LM, cached on disk."""
    from paraamr.lms import load_scorer
    from paraamr.lms.cache import CachedScorer

    lm = load_scorer(policy.lm, batch_size=batch_size)
    cached = CachedScorer(lm, cache_dir)
    return cached.perplexities, lm.signature()


def prepare(
    cfg: Mapping[str, Any],
    data_dir: Callable[[], Path] | None = None,
    scorer: Callable[[list[str]], list[float]] | None = None,
) -> dict:
    """Read the corpora, write every training set and ``OUT/plan.json``; returns the plan.

    ``cfg`` is ``conf/compare.yaml`` as a mapping; ``scorer`` replaces the policy's LM (tests).
    Every check (rows, files, tasks, seeds, the reference) runs before anything is read.
    """
    out = Path(cfg["out_dir"])
    tasks = list(cfg["tasks"])
    unknown = sorted(set(tasks) - set(TASKS))
    if not tasks or unknown:
        raise ConfigError(f"tasks: {unknown or 'none given'}; known: {', '.join(TASKS)}")
    if "table7" in tasks and "table6" not in tasks:
        raise ConfigError(
            "table7 augments with the comparison's own Table 6 models: "
            "give tasks=[table6,table7] (or table5 too)"
        )
    seeds = seed_list(cfg["seeds"])
    if not seeds:
        raise ConfigError("seeds: give at least one seed")
    if not cfg.get("corpora"):
        raise ConfigError('corpora: give "name=FILE[:format] ..." (the rows to compare)')
    specs = parse_corpus_specs(str(cfg["corpora"]))
    specs = with_built_runs(in_data_dir(specs, data_dir or (lambda: Path("."))))
    controls = list(cfg.get("controls") or [])
    check_rows(specs, controls)
    ref = cfg.get("ref") or specs[0].name
    if ref not in [s.name for s in specs] + controls:
        raise ConfigError(f"ref={ref!r} is no row; rows: {[s.name for s in specs] + controls}")
    policy = Policy.from_config(cfg["policy"])
    common = read_common(
        specs, policy.lowercase, cfg.get("on_error", "raise"), bool(cfg.get("progress", True))
    )
    lm_label = "none"
    if policy.scores_perplexity(tasks) and scorer is None:
        scorer, lm_label = _scorer(policy, out / "cache", int(cfg.get("lm_batch_size", 32)))
    elif policy.scores_perplexity(tasks):
        lm_label = getattr(scorer, "label", "test-scorer")
    set_tasks = [t for t in tasks if t in SET_TASKS]
    built = build_sets(common, policy, set_tasks, controls, cfg.get("control_from"), scorer)
    rows = [s.name for s in specs] + controls
    plan: dict[str, Any] = {
        "out_dir": str(out),
        "corpora": [asdict(s) for s in specs],
        "controls": controls,
        "rows": rows,
        "ref": ref,
        "seeds": seeds,
        "policy": {**asdict(policy), "max_perplexity": dict(policy.max_perplexity)},
        "lm": lm_label,
        "common_sources": len(common.keys),
        "dev_sources": len(built["dev"]),
        "tasks": {},
        "jobs": [],
    }
    common_digest, dev_digest = keys_digest(common.keys), keys_digest(built["dev"])
    group = (cfg.get("wandb") or {}).get("group") or f"compare-{common_digest}"
    plan["wandb_group"] = group
    for task in set_tasks:
        sig = policy.signature(task, common=common_digest, dev=dev_digest, lm_label=lm_label)
        sets = {}
        for row in rows:
            r = built["sets"][task][row]
            path = out / "sets" / task / f"{row}.jsonl"
            sha = write_set(path, r["train"], r["dev"], built["perplexities"], task == "table6")
            sets[row] = {"path": str(path), "sha256": sha, "counts": asdict(r["counts"])}
            if r["counts"].train_pairs == 0:
                raise DataNotFoundError(
                    f"{task}: no training pair of {row} survived the policy "
                    f"({asdict(r['counts'])}): loosen the thresholds"
                )
        plan["tasks"][task] = {"signature": str(sig), "sets": sets}
        user = [str(o) for o in (cfg.get("task_overrides") or {}).get(task) or []]
        setting = setting_digest(str(sig), user)
        plan["tasks"][task]["setting"] = setting
        runs = [(row, sets[row]["path"], sets[row]["sha256"]) for row in rows]
        if task == "table5" and cfg.get("untrained", True):
            runs.insert(0, (UNTRAINED, None, None))
        for row, path, sha in runs:
            for seed in seeds if path is not None else seeds[:1]:
                run_dir = str(out / "runs" / task / setting / row / f"seed{seed}")
                ov = task_overrides(task, row, path, len(built["dev"]), seed, run_dir, group)
                job = {
                    "task": task,
                    "row": row,
                    "seed": seed,
                    "set_sha256": sha,
                    "run_dir": run_dir,
                    "overrides": [*ov, *user],
                }
                job["key"] = job_key(job, str(sig))
                plan["jobs"].append(job)
    if "table7" in tasks:
        user = [str(o) for o in (cfg.get("task_overrides") or {}).get("table7") or []]
        _table7_jobs(plan, user)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / PLAN_FILE, plan, sort_keys=False)
    log.info(
        "compare: %d common sources, %d dev, %d jobs -> %s",
        len(common.keys),
        len(built["dev"]),
        len(plan["jobs"]),
        out / PLAN_FILE,
    )
    return plan


#: the Table 7 row without augmentation (the few-shot baseline every row is compared with)
NO_AUGMENTATION = "no-augmentation"


def _table7_jobs(plan: dict[str, Any], user: list[str]) -> None:
    """Table 7's jobs: per seed, the few-shot classifier without augmentation, and with the
    augmentation of each row's Table 6 model of the same seed (by row name; its job key in the
    Table 7 job's key, so a retrained model reruns the jobs that used it)."""
    sig = plan["tasks"]["table6"]["signature"]
    setting = setting_digest(sig, user)
    plan["tasks"]["table7"] = {"signature": sig, "sets": {}, "setting": setting}
    out, group = Path(plan["out_dir"]), plan["wandb_group"]
    models = {(j["row"], j["seed"]): j for j in plan["jobs"] if j["task"] == "table6"}
    for row in [NO_AUGMENTATION, *plan["rows"]]:
        for seed in plan["seeds"]:
            run_dir = str(out / "runs" / "table7" / setting / row / f"seed{seed}")
            ov = [f"seed={seed}", f"out_dir={run_dir}", f"logger.wandb.group={group}"]
            model = None
            if row != NO_AUGMENTATION:
                model = models[(row, seed)]
                ov = [
                    "augment=scpn",
                    f"augment.corpus={row}",
                    f"augment.paraphraser.model={model['run_dir']}/best_model",
                    *ov,
                ]
            job = {
                "task": "table7",
                "row": row,
                "seed": seed,
                "set_sha256": model["key"] if model else None,
                "run_dir": run_dir,
                "overrides": [*ov, *user],
            }
            job["key"] = job_key(job, sig)
            plan["jobs"].append(job)


def read_plan(out_dir: str | Path) -> dict:
    """``OUT/plan.json`` (a one-line error when the prepare step has not run)."""
    path = Path(out_dir) / PLAN_FILE
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no plan; run experiments/compare.py stage=prepare first")
    return json.loads(path.read_text(encoding="utf-8"))


def finished(job: Mapping[str, Any]) -> bool:
    """Whether the job's folder holds a result made with exactly this job's key."""
    run = Path(job["run_dir"])
    try:
        stamp = json.loads((run / JOB_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return stamp.get("key") == job["key"] and (run / RESULT_FILE).is_file()


def _eta(plan: Mapping[str, Any]) -> str:
    done = [
        json.loads((Path(j["run_dir"]) / RESULT_FILE).read_text()).get("seconds")
        for j in plan["jobs"]
        if finished(j)
    ]
    secs = [s for s in done if s]
    left = len(plan["jobs"]) - len(done)
    if not secs or not left:
        return f"{len(done)} of {len(plan['jobs'])} done"
    eta = sum(secs) / len(secs) * left / 60
    return f"{len(done)} of {len(plan['jobs'])} done, about {eta:.0f} min left"


def run_job(
    plan: Mapping[str, Any],
    index: int,
    compose: Callable[[str, list[str]], Any],
    run: Callable[[str, Any], dict],
) -> dict:
    """Run job ``index`` of the plan unless it finished with the same key (then its record is
    returned as it is). A folder holding another key's result is cleared first, so a changed
    job never mixes with its earlier run. ``compose(task, overrides)`` makes the task's config,
    ``run(task, cfg)`` runs it and returns its record. The record's signature gets the policy's
    fields (``policy.<name>``) and the training set's digest."""
    jobs = plan["jobs"]
    if not 0 <= index < len(jobs):
        raise ConfigError(f"job={index}: the plan has jobs 0..{len(jobs) - 1}")
    job = jobs[index]
    run_dir = Path(job["run_dir"])
    what = f"job {index + 1}/{len(jobs)} ({job['task']} {job['row']} seed {job['seed']})"
    if finished(job):
        log.info("compare: %s finished earlier with the same settings: reused", what)
        return json.loads((run_dir / RESULT_FILE).read_text(encoding="utf-8"))
    if run_dir.exists():
        log.info("compare: %s: %s holds a run with other settings: rerun", what, run_dir)
        shutil.rmtree(run_dir)
    log.info("compare: %s starts; %s", what, _eta(plan))
    t0 = time.perf_counter()
    record = run(job["task"], compose(job["task"], list(job["overrides"])))
    policy_sig = Signature(plan["tasks"][job["task"]]["signature"])
    extra = {f"policy.{k}": v for k, v in policy_sig.fields.items()}
    if job.get("set_sha256"):
        extra["set"] = job["set_sha256"][:12]
    record["signature"] = str(Signature(record["signature"]).with_fields(**extra))
    record["compare_row"] = job["row"]
    path = run_dir / RESULT_FILE
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored.update(signature=record["signature"], compare_row=job["row"])
    write_json_atomic(path, stored, sort_keys=False)
    write_json_atomic(
        run_dir / JOB_FILE,
        {"key": job["key"], "task": job["task"], "row": job["row"], "seed": job["seed"]},
    )
    log.info("compare: %s done in %.1f min", what, (time.perf_counter() - t0) / 60)
    return record


def job_rows(plan: Mapping[str, Any], task: str) -> Sequence[str]:
    """The rows of ``task`` in plan order (the untrained base first where it runs)."""
    seen: dict[str, None] = {}
    for j in plan["jobs"]:
        if j["task"] == task:
            seen.setdefault(j["row"])
    return list(seen)
