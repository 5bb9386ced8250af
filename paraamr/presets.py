"""Hydra entry points: one-line errors and experiment presets that name their entry point.

Every ``experiments/*.py`` main is wrapped by :func:`hydra_entry`: a :class:`ParaAMRError` or
a missing file ends the run with one line ``<script>: error: <reason>`` and exit status 2
(``PARAAMR_DEBUG=1`` shows the traceback), and a ``+experiment=`` preset whose
``preset_for`` does not name this entry point's config is refused before anything runs
(``conf/experiment/table5_paper.yaml`` is for ``table5``, not for ``table2``). The config's
``paths`` group is resolved here, once (:func:`paraamr.datadir.resolve_paths`).

>>> from omegaconf import OmegaConf
>>> check_preset(OmegaConf.create({"preset_for": ["table5"]}), "table5")
>>> check_preset(OmegaConf.create({}), "table2")  # no preset: nothing to check
>>> check_preset(OmegaConf.create({"preset_for": ["table5"]}), "table2")
Traceback (most recent call last):
paraamr.errors.ConfigError: +experiment=... is a preset for config table5 (experiments/table5.py), not table2
"""  # noqa: E501

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paraamr.datadir import resolve_paths
from paraamr.errors import ConfigError, ParaAMRError, describe_error

__all__ = ["ENTRY_SCRIPTS", "check_preset", "hydra_entry", "compose_entry"]

#: config name -> the entry point that composes it
ENTRY_SCRIPTS = {
    "amr": "experiments/train_amr.py",
    "build": "experiments/build.py",
    "compare": "experiments/compare.py",
    "fewshot": "experiments/table7.py",
    "scpn": "experiments/train_scpn.py",
    "simcse": "experiments/train_simcse.py",
    "sts": "experiments/sts.py",
    "table2": "experiments/table2.py",
    "table5": "experiments/table5.py",
    "table6": "experiments/table6.py",
    "top": "experiments/top.py",
    "validity": "experiments/validity.py",
}


def _preset_name() -> str:
    try:
        from hydra.core.hydra_config import HydraConfig

        name = HydraConfig.get().runtime.choices.get("experiment")
    except (ImportError, ValueError):
        name = None
    return f"+experiment={name}" if name else "+experiment=..."


def check_preset(cfg: Any, config_name: str) -> None:
    """Refuse a preset made for another entry point (its ``preset_for`` list)."""
    allowed = cfg.get("preset_for")
    if allowed is None:
        return
    allowed = [allowed] if isinstance(allowed, str) else [str(a) for a in allowed]
    if config_name not in allowed:
        where = ", ".join(f"config {a} ({ENTRY_SCRIPTS.get(a, '?')})" for a in allowed)
        raise ConfigError(f"{_preset_name()} is a preset for {where}, not {config_name}")


#: errors a task reports in one line (the user's input or settings, not a bug)
_USER_ERRORS = (ParaAMRError, FileNotFoundError, IsADirectoryError, PermissionError)


def hydra_entry(config_name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a Hydra task function (under ``@hydra.main``): the preset check, then one-line
    errors with exit status 2."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def task(cfg: Any) -> Any:
            from hydra.errors import InstantiationException

            try:
                check_preset(cfg, config_name)
                resolve_paths(cfg)  # the one place paths.data_dir is looked up
                return fn(cfg)
            except (*_USER_ERRORS, InstantiationException) as e:
                # a config object that refuses its settings: Hydra wraps the error, say it alone
                cause = e.__cause__ if isinstance(e, InstantiationException) else e
                if os.environ.get("PARAAMR_DEBUG") == "1" or not isinstance(cause, _USER_ERRORS):
                    raise
                print(f"{Path(sys.argv[0]).name}: error: {describe_error(cause)}", file=sys.stderr)
                raise SystemExit(2) from None

        return task

    return wrap


def compose_entry(config_name: str, overrides: list[str]) -> Any:
    """Another entry point's config with ``overrides``, as that entry point would run it: its
    preset checked and its ``paths`` resolved (an orchestrator running a table's jobs in
    process, :mod:`paraamr.compare`). Inside a Hydra app the app's config folder is used, else
    ``conf/`` of this checkout."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        cfg = compose(config_name=config_name, overrides=overrides)
    else:
        conf = Path(__file__).resolve().parents[1] / "conf"
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            cfg = compose(config_name=config_name, overrides=overrides)
    check_preset(cfg, config_name)
    resolve_paths(cfg)
    return cfg
