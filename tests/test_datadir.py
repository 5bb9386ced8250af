"""`make data` code path, exercised with file:// copies of the real files (no network here)."""

import io
import zipfile

import pytest

from paraamr.corpus import read_corpus
from paraamr.datadir import fetch
from paraamr.errors import DataNotFoundError


def test_fetch_parabank_eval_from_mirror(tmp_path, parabank_eval):
    urls = {"files": {f: (parabank_eval / f).as_uri() for f in ("ref.tsv", "candidates.tsv")}}
    dest = fetch("parabank-eval", tmp_path, urls)
    assert len(list(read_corpus(dest, "parabank-eval-paranmt"))) == 400


def test_fetch_zip_layout(tmp_path, data_dir):
    buf = io.BytesIO()
    src = data_dir / "ptb-sample" / "combined" / "wsj_0001.mrg"
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("treebank/combined/wsj_0001.mrg", src.read_bytes())
        zf.writestr("treebank/README", "x")
    z = tmp_path / "treebank.zip"
    z.write_bytes(buf.getvalue())
    dest = fetch("ptb-sample", tmp_path / "out", {"zip": z.as_uri()})
    assert [p.name for p in dest.iterdir()] == ["wsj_0001.mrg"]


def test_unreachable_url_is_a_clear_error(tmp_path):
    with pytest.raises(DataNotFoundError, match="data_dir"):
        fetch("parabank-eval", tmp_path, {"files": {"ref.tsv": (tmp_path / "no").as_uri()}})
