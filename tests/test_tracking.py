"""W&B tracking: offline by default (WANDB_MODE unset), and what a run records read back."""

from __future__ import annotations

from wandb_records import read_offline_run

from paraamr.tracking import wandb_mode, wandb_run


def test_offline_is_the_default_when_wandb_mode_is_unset(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)  # conftest sets it for every other test
    assert wandb_mode() == "offline"
    with wandb_run(
        project="paraamr-test", group="g-1", name="ParaNMT", config={"k": 3}, directory=tmp_path
    ) as run:
        assert run.settings.mode == "offline"
        run.summary.update({"similarity": 81.5, "n_pairs": 12})
    (run_dir,) = (tmp_path / "wandb").glob("offline-run-*")
    got = read_offline_run(run_dir)
    assert (got["project"], got["group"], got["name"]) == ("paraamr-test", "g-1", "ParaNMT")
    assert got["config"] == {"k": 3} and got["summary"] == {"similarity": 81.5, "n_pairs": 12}


def test_disabled_mode_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "disabled")
    with wandb_run(project="p", group="g", name="n", config={}, directory=tmp_path) as run:
        assert run is None
    assert not (tmp_path / "wandb").exists()
