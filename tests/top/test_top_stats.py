"""``python -m paraamr.top stats`` on the real train/test files, checked against regex counts."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from paraamr.errors import CorpusFormatError
from paraamr.top.__main__ import main

_RUN = re.compile(r"(?:(?<= )[^\s\[\]]+ )+")


def _templates(path) -> list[str]:
    return [_RUN.sub("[mask] ", ln) for ln in path.read_text(encoding="utf-8").splitlines()]


def test_stats_command_on_real_top(data_dir, tmp_path, capsys):
    d = data_dir / "top-v1-train-clean"
    train, test = d / "train.clean.seq", d / "test.clean.seq"
    main(["stats", "--train", str(train), "--test", str(test), "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "template_stats.json").read_text())
    assert (tmp_path / "template_rank_frequency.png").stat().st_size > 1000

    want = Counter(_templates(train))
    tr = report["train"]
    assert tr["n_examples"] == sum(want.values()) == 28_410
    assert tr["n_templates"] == len(want)
    ranked = sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    assert [(r["template"], r["count"]) for r in tr["top"]] == ranked
    assert tr["singleton_templates"] == sum(1 for c in want.values() if c == 1)
    assert f"unique templates: {len(want):,}" in printed

    buckets = Counter()
    for t in _templates(test):
        f = want.get(t, 0)
        buckets["f=0" if f == 0 else "f>=5" if f >= 5 else "f<5"] += 1
    (te,) = report["tests"]
    assert te["buckets"] == dict(buckets) | {
        k: 0 for k in ("f>=5", "f<5", "f=0") if k not in buckets
    }
    assert sum(te["buckets"].values()) == te["n"] == 8_241
    assert te["shares"]["f=0"] == pytest.approx(buckets["f=0"] / 8_241)
    assert report["signature"].startswith("paraamr-top-stats|train:train.clean.seq@")


def test_stats_command_reports_bad_lines(tmp_path, capsys):
    p = tmp_path / "t.seq"
    p.write_text("[IN:A x ]\n[IN:A x [SL:B ] ]\n[IN:B y ]\n")
    with pytest.raises(CorpusFormatError, match=r"t\.seq:2"):
        main(["stats", "--train", str(p), "--no-out", "--debug"])
    with pytest.raises(SystemExit):  # without --debug: one line, exit status 2
        main(["stats", "--train", str(p), "--no-out"])
    assert "t.seq:2:" in capsys.readouterr().err
    main(["stats", "--train", str(p), "--no-out", "--on-error", "skip"])
    out = capsys.readouterr().out
    assert "unique templates: 2" in out and "skipped bad lines: 1" in out
