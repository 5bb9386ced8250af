"""Run a comparison from its Hydra config (``conf/compare.yaml``; ``experiments/compare.py``).

Stages (``stage=``): ``prepare`` writes the training sets and the plan; ``job`` runs one job of
the plan (``job=N``; ``experiments/compare.py -m stage=job job=range(0,N)`` is the Hydra
multirun of them all, each reused when it finished with the same key); ``report`` gathers the
jobs into ``compare.json`` and the tables; ``all`` runs the three, the jobs as that multirun in a
child process.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from paraamr.compare.plan import prepare, read_plan, run_job
from paraamr.compare.report import write_report
from paraamr.errors import ConfigError, TrainingError

__all__ = ["STAGES", "run_compare", "compose_task", "run_task", "training_sets_table2"]

log = logging.getLogger(__name__)

STAGES = ("all", "prepare", "job", "report")
#: the entry point config each task's jobs compose (Table 7's is the few-shot one)
TASK_CONFIGS = {"table5": "table5", "table6": "table6", "table7": "fewshot", "table2": "table2"}


def compose_task(task: str, overrides: list[str], data_dir: str | None = None) -> DictConfig:
    """A task's entry point config (``conf/<task>.yaml``; Table 7's is ``fewshot``) with
    ``overrides``, as its own entry point runs it (:func:`paraamr.presets.compose_entry`)."""
    from paraamr.presets import compose_entry

    extra = [f"paths.data_dir={data_dir}"] if data_dir else []
    return compose_entry(TASK_CONFIGS.get(task, task), [*overrides, *extra])


def run_task(task: str, cfg: DictConfig) -> dict:
    """Run one job of ``task`` (its own job function) and return its record."""
    if task == "table5":
        from paraamr.simcse.job import run_job as job
    elif task == "table6":
        from paraamr.scpn.job import run_job as job
    elif task == "table7":
        from paraamr.fewshot.job import run_job as job
    else:
        raise ConfigError(f"unknown task {task!r}")
    record = job(cfg)
    if "signature" not in record:
        raise TrainingError(f"{task} job in {cfg.out_dir} wrote no result (no model trained?)")
    return record


def training_sets_table2(plan: dict, cfg: DictConfig) -> dict | None:
    """Table 2 of the first task's training sets (the same sources, the same policy), beside the
    downstream numbers; ``None`` when ``table2=false``."""
    if not cfg.get("table2", True):
        return None
    from paraamr.tables.run_table2 import run_table2

    task = next(iter(plan["tasks"]))
    sets = plan["tasks"][task]["sets"]
    corpora = " ".join(f"{row}={s['path']}:paraamr" for row, s in sets.items())
    wb = "true" if cfg.wandb.enabled else "false"
    t2 = compose_task(
        "table2",
        [
            f'corpora="{corpora}"',
            f"out_dir={Path(cfg.out_dir) / 'table2'}",
            "lowercase_keys=true",
            f"wandb.enabled={wb}",
            f"progress={str(bool(cfg.progress)).lower()}",
        ],
        cfg.paths.data_dir,
    )
    return run_table2(t2)


def _jobs_multirun(cfg: DictConfig, n: int) -> None:
    """Every job as one Hydra multirun in a child process (a failed job stops it)."""
    script = Path(__file__).resolve().parents[2] / "experiments" / "compare.py"
    args = [a for a in sys.argv[1:] if not a.startswith(("stage=", "job=", "-m", "--multirun"))]
    cmd = [sys.executable, str(script), "-m", *args, "stage=job", f"job=range(0,{n})"]
    log.info("compare: %d jobs as a Hydra multirun: %s", n, " ".join(cmd))
    rc = subprocess.call(cmd)
    if rc:
        raise TrainingError(
            f"a compare job failed (exit status {rc}); rerun the same command: "
            "finished jobs are reused"
        )


def run_compare(cfg: DictConfig) -> Any:
    """Run ``cfg.stage`` (see the module docstring)."""
    from paraamr.datadir import data_path

    if cfg.stage not in STAGES:
        raise ConfigError(f"stage={cfg.stage}: one of {', '.join(STAGES)}")
    out = Path(cfg.out_dir)
    if cfg.stage in ("all", "prepare"):
        plain = OmegaConf.to_container(cfg, resolve=True)
        plan = prepare(plain, lambda: data_path(cfg.paths.data_dir))
        if cfg.stage == "prepare":
            return plan
        _jobs_multirun(cfg, len(plan["jobs"]))
    if cfg.stage == "job":
        if cfg.job is None:
            raise ConfigError("stage=job needs job=N (or -m job=range(0,N))")
        plan = read_plan(out)
        return run_job(
            plan,
            int(cfg.job),
            lambda task, ov: compose_task(task, ov, cfg.paths.data_dir),
            run_task,
        )
    plan = read_plan(out)
    table2 = training_sets_table2(plan, cfg)
    wb = {**OmegaConf.to_container(cfg.wandb, resolve=True)}
    wb["group"] = plan["wandb_group"]
    report = write_report(plan, out, table2=table2, wandb_cfg=wb)
    print((out / "compare.md").read_text(encoding="utf-8"))
    return report
