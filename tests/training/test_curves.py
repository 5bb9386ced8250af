"""Training curves from Lightning CSV logs and the figure writer."""

from __future__ import annotations

import pytest

from paraamr.errors import CorpusFormatError
from paraamr.figures import png_description
from paraamr.training.curves import latest_metrics_csv, plot_curves, read_metrics_csv

LOG = (
    "epoch,step,lr-Adam,train/loss,val/loss,val/ppl\n"
    "0,9,0.001,2.5,,\n"
    "0,19,0.001,2.0,,\n"
    "0,19,,,1.9,6.7\n"
    "1,29,0.001,nan,,\n"
)


def test_points_are_read_per_column_and_non_finite_left_out(tmp_path):
    p = tmp_path / "metrics.csv"
    p.write_text(LOG)
    got = read_metrics_csv(p)
    assert got == {
        "lr-Adam": [(9, 0.001), (19, 0.001), (29, 0.001)],
        "train/loss": [(9, 2.5), (19, 2.0)],
        "val/loss": [(19, 1.9)],
        "val/ppl": [(19, 6.7)],
    }
    p.write_text(LOG + "1,39,0.001,oops,,\n")
    with pytest.raises(CorpusFormatError, match=r"metrics\.csv:6: not a number"):
        read_metrics_csv(p)
    p.write_text("a,b\n1,2\n")
    with pytest.raises(CorpusFormatError, match="no 'step' column"):
        read_metrics_csv(p)


def test_plot_writes_png_and_pdf_with_the_signature(tmp_path):
    for k in (0, 2, 10):
        d = tmp_path / "run" / "csv" / f"version_{k}"
        d.mkdir(parents=True)
        (d / "metrics.csv").write_text(LOG)
    latest = latest_metrics_csv(tmp_path / "run")
    assert latest.parent.name == "version_10"  # numeric order, not text order
    paths = plot_curves({"a": latest, "b": latest}, tmp_path / "curves", signature="run:x|seed:0")
    assert [p.name for p in paths] == ["curves.png", "curves.pdf"]
    assert png_description(paths[0]) == "run:x|seed:0"
    assert b"run:x|seed:0" in paths[1].read_bytes()  # PDF Subject
    assert latest_metrics_csv(tmp_path / "none") is None
