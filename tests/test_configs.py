"""Every config composes, every ``_target_`` resolves and accepts its keys, and every config that
needs no network or GPU is instantiated for real.

Options of each group are read from ``conf/<group>/*.yaml``, so a new option is tested without
editing this file.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from hydra.utils import get_object, instantiate
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"

# entry point -> (its config groups, extra overrides a composition needs)
ENTRY_POINTS = {
    "table2": (("similarity", "parser", "ted"), ()),
    "build": (("stog", "generator", "lm"), ("input=x.txt",)),
    "simcse": (("trainer", "model", "data", "callbacks", "logger"), ()),
    "table5": (("train_corpus",), ("data.path=x.jsonl",)),
    "sts": ((), ()),
    "validity": (("similarity", "parser", "ted"), ()),
    "top": (("trainer", "model", "data", "callbacks", "logger"), ()),
    "amr": (("trainer", "callbacks", "logger"), ()),
    "scpn": (("trainer", "model", "data", "parser", "callbacks", "logger"), ()),
    "table6": (("train_corpus",), ("data.path=x.jsonl",)),
    "fewshot": (("model", "augment"), ()),
    "compare": ((), ()),
}
PRESETS = {  # experiment presets per entry point (conf/experiment/<entry>_*.yaml)
    name: sorted(p.stem for p in (CONF / "experiment").glob(f"{name}_*.yaml"))
    for name in ENTRY_POINTS
}


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def _compositions():
    for name, (groups, extra) in ENTRY_POINTS.items():
        yield name, extra
        for preset in PRESETS[name]:
            yield name, (*extra, f"+experiment={preset}")
        for g in groups:
            for opt in _options(g):
                yield name, (*extra, f"{g}={opt}")


def _targets(node, path=""):
    """``(dotted path, node)`` of every mapping with a non-null ``_target_``."""
    if isinstance(node, dict):
        if node.get("_target_"):
            yield path, node
        for k, v in node.items():
            yield from _targets(v, f"{path}.{k}" if path else str(k))


def test_every_experiment_preset_belongs_to_an_entry_point():
    every = {p.stem for p in (CONF / "experiment").glob("*.yaml")}
    assert every == {p for ps in PRESETS.values() for p in ps}
    assert all(PRESETS.values())  # each entry point has at least one preset


@pytest.mark.parametrize(("name", "overrides"), list(_compositions()), ids=str)
def test_config_composes_and_targets_bind(compose_config, name, overrides):
    cfg = compose_config(name, *overrides)
    plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    for path, node in _targets(plain):
        target = get_object(node["_target_"])
        kwargs = {k: v for k, v in node.items() if not k.startswith("_")}
        try:
            inspect.signature(target).bind_partial(**kwargs)
        except TypeError as e:
            pytest.fail(f"{name} {overrides}: {path} ({node['_target_']}) does not take {e}")


def test_offline_configs_instantiate(compose_config, data_dir, tmp_path):
    """What runs offline is built for real: parser, encoder, metric and builder settings,
    trainer, callbacks, loggers, the SimCSE module and its data."""
    t2 = compose_config("table2")
    assert instantiate(t2.metrics).ted_variant == t2.ted.variant
    assert instantiate(t2.parser).name == "spacy"
    assert hasattr(instantiate(t2.similarity), "encode")
    assert instantiate(compose_config("table2", "parser=gold").parser).name == "gold"
    b = compose_config("build", "input=x.txt", "focus.policy=random_k", "focus.k=2")
    s = instantiate(b.settings)
    assert (s.focus_policy, s.focus_k, s.on_error) == ("random_k", 2, "skip")
    sim = compose_config(
        "simcse",
        f"out_dir={tmp_path}",
        f"paths.data_dir={data_dir}",
        "logger.wandb.enabled=false",
        "data.limit=8",
    )
    stsb = data_dir / "glue" / "k-shot" / "STS-B" / "16-42" / "test.tsv"
    callbacks = {
        k: instantiate(v, **({"path": str(stsb)} if k == "sts_dev" else {}))
        for k, v in sim.callbacks.items()
    }
    assert sorted(callbacks) == ["checkpoint", "finite_loss", "progress_bar", "sts_dev"]
    loggers = {k: instantiate(v) for k, v in sim.logger.items()}
    assert loggers["wandb"] is None and type(loggers["csv"]).__name__ == "CSVLogger"
    trainer = instantiate(sim.trainer, logger=False)
    assert trainer.max_steps == sim.trainer.max_steps
    module = instantiate(sim.model)
    dm = instantiate(
        sim.data, path=str(data_dir / "paraphrase" / "parabank-eval"), tokenizer=module.tokenizer
    )
    assert len(dm.triplets) == 8 and dm.batch_size == sim.data.batch_size
    top = compose_config("top", f"data.data_dir={data_dir}", "data.limit_test=5")
    data = instantiate(top.data)
    assert len(data.load("test")) == 5 and data.path("train").name == "train.clean.seq"
    assert instantiate(top.callbacks.checkpoint, dirpath=str(tmp_path)).monitor == "val/loss"


def test_config_mistakes_name_the_key(compose_config):
    from hydra.errors import InstantiationException

    from paraamr.errors import ConfigError

    bad = compose_config("table2", "metrics.on_error=ignore")
    with pytest.raises(InstantiationException) as info:  # Hydra wraps what the target raised
        instantiate(bad.metrics)
    err = info.value.__cause__
    assert isinstance(err, ConfigError) and "on_error must be one of" in str(err)
    bad = compose_config("build", "input=x.txt", "focus.policy=rnd")
    with pytest.raises(InstantiationException) as info:
        instantiate(bad.settings)
    err = info.value.__cause__
    assert isinstance(err, ConfigError) and "focus.policy" in str(err)


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("simcse", "trainer"),
        ("simcse", "model"),
        ("simcse", "data"),
        ("table2", "similarity"),
        ("table2", "parser"),
    ],  # fmt: skip
)
def test_every_option_of_a_building_group_has_a_target(compose_config, name, group):
    for opt in _options(group):
        node = compose_config(name, f"{group}={opt}")[group]
        assert node.get("_target_"), f"{group}/{opt} builds nothing"


def test_the_wandb_logger_gets_a_plain_dict_config(compose_config, tmp_path, monkeypatch):
    """wandb cannot serialise an OmegaConf node: the run config must arrive as a plain dict."""
    import pytorch_lightning.loggers as pl_loggers

    from paraamr.training import fit as fit_mod

    seen = {}

    class FakeWandbLogger:
        def __init__(self, **kw):
            seen.update(kw)

    monkeypatch.setattr(pl_loggers, "WandbLogger", FakeWandbLogger)
    cfg = compose_config("simcse", f"out_dir={tmp_path}", "logger.wandb.mode=offline")
    loggers = fit_mod.instantiate_loggers(cfg)
    assert sorted(type(lg).__name__ for lg in loggers) == ["CSVLogger", "FakeWandbLogger"]
    assert type(seen["config"]) is dict and seen["config"]["seed"] == 0


def _presets():
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1] / "conf" / "experiment"
    for p in sorted(root.glob("*.yaml")):
        yield p.stem, yaml.safe_load(p.read_text()).get("preset_for")


@pytest.mark.parametrize(("preset", "declared"), list(_presets()))
def test_each_preset_runs_only_with_its_entry_points(preset, declared, compose_config):
    from paraamr.errors import ConfigError
    from paraamr.presets import ENTRY_SCRIPTS, check_preset

    if declared is None:
        pytest.skip(f"{preset} declares no entry point")
    for name in declared:
        check_preset(compose_config(name, f"+experiment={preset}"), name)
    from hydra.errors import ConfigCompositionException

    other = next(n for n in ("table2", "validity") if n not in declared)
    try:
        cfg = compose_config(other, f"+experiment={preset}")
    except ConfigCompositionException:  # Hydra refuses it already (an override of a missing group)
        return
    with pytest.raises(ConfigError, match=f"is a preset for config {declared[0]}"):
        check_preset(cfg, other)
    assert set(declared) <= set(ENTRY_SCRIPTS)


def test_hydra_entry_points_fail_with_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for script, args, says in (
        ("table2", ["+experiment=table5_paper"], "is a preset for config table5"),
        ("table2", ["corpora=nosuch"], "corpus spec 'nosuch' is not name=FILE[:format]"),
        # a settings object that refuses its values inside Hydra's instantiate
        ("train_amr", ["data.silver_directions=[parser]", f"out_dir={tmp_path}"],
         "data.silver_directions: 'parser' is not parse or generate"),
    ):  # fmt: skip
        r = subprocess.run(
            [sys.executable, f"experiments/{script}.py", *args, f"hydra.run.dir={tmp_path}"],
            cwd=root, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr and r.stderr.strip().splitlines()[-1] == (
            f"{script}.py: error: {r.stderr.strip().splitlines()[-1].split('error: ', 1)[1]}"
        )
        assert says in r.stderr


@pytest.mark.parametrize("name", ["table5", "table6", "fewshot", "scpn", "amr"])
def test_the_long_runs_show_a_progress_bar_with_an_eta(compose_config, name):
    """Training jobs of minutes to hours show Lightning's TQDM bar (rate and ETA; a Rich bar
    would show nothing in a job's log file) unless the trainer's bar is turned off; where a
    step budget governs (``max_steps``), ``max_epochs: -1`` lets the bar count down to the
    budget instead of to the end of an epoch the run never finishes."""
    from pytorch_lightning.callbacks import TQDMProgressBar

    from paraamr.training.recipe import resolve_precision  # as fit does ("auto" is ours)

    extra = {"table5": ["data.path=x.jsonl"], "table6": ["data.path=x.jsonl"]}.get(name, [])
    cfg = compose_config(name, *extra)
    assert cfg.trainer.enable_progress_bar is True
    if cfg.trainer.max_steps > 0:
        assert cfg.trainer.max_epochs == -1
    bar = instantiate(cfg.callbacks.progress_bar)
    assert isinstance(bar, TQDMProgressBar)  # also in a job's log file
    precision = resolve_precision(cfg.trainer.precision, cfg.trainer.get("accelerator"))[0]
    trainer = instantiate(cfg.trainer, logger=False, callbacks=[bar], precision=precision)
    assert trainer.progress_bar_callback is bar
    off = compose_config(name, *extra, "trainer.enable_progress_bar=false")
    assert instantiate(off.callbacks.progress_bar) is None  # fit drops it: no bar, no conflict


@pytest.mark.parametrize(
    "launcher", sorted(p.stem for p in (CONF / "hydra" / "launcher").glob("slurm*.yaml"))
)
def test_slurm_launchers_name_partition_and_account(launcher):
    """Each SLURM launcher says where its jobs go: ``partition`` and ``account`` are in the file
    (null: the cluster's default) with the override that sets them in its comment, and every
    key of the file is a setting of the submitit SLURM launcher."""
    import dataclasses

    import yaml
    from hydra import compose, initialize_config_dir
    from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf

    path = CONF / "hydra" / "launcher" / f"{launcher}.yaml"
    text = path.read_text(encoding="utf-8")
    keys = yaml.safe_load(text)
    assert keys["partition"] is None and keys["account"] is None
    assert "hydra.launcher.partition=" in text and "hydra.launcher.account=" in text
    fields = {f.name for f in dataclasses.fields(SlurmQueueConf)}
    assert set(keys) - {"defaults"} <= fields, set(keys) - {"defaults"} - fields
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            "table2",
            overrides=[f"hydra/launcher={launcher}", "hydra.launcher.partition=gpu",
                       "hydra.launcher.account=proj"],
            return_hydra_config=True,
        )  # fmt: skip
    assert (cfg.hydra.launcher.partition, cfg.hydra.launcher.account) == ("gpu", "proj")


def test_every_entry_point_is_paired_with_its_config():
    """docs/architecture.md's rule: each top-level ``conf/<config>.yaml`` has one script in
    ``experiments/``, paired in ``paraamr.presets.ENTRY_SCRIPTS``, whose ``@hydra.main`` and
    ``hydra_entry`` both name that config."""
    import re

    from paraamr.presets import ENTRY_SCRIPTS

    configs = {p.stem for p in CONF.glob("*.yaml")}
    scripts = {f"experiments/{p.name}" for p in (ROOT / "experiments").glob("*.py")}
    assert set(ENTRY_SCRIPTS) == configs
    assert set(ENTRY_SCRIPTS.values()) == scripts
    for config, script in ENTRY_SCRIPTS.items():
        text = (ROOT / script).read_text(encoding="utf-8")
        assert re.search(rf'config_name="{config}"\)', text), script
        assert f'@hydra_entry("{config}")' in text, script
