"""Where the data lives (:func:`resolve_data_dir`) and `make data`, which fetches the public
evaluation sets Table 2 needs into the layout the suite reads.

    python -m paraamr.datadir --out data          # then: make table2 ARGS=paths.data_dir=data

Needs network (GitHub raw files). Offline machines point ``paths.data_dir`` at an existing copy.

=================  ==============================================  ==============================
name               source                                          written to
=================  ==============================================  ==============================
parabank-eval      github.com/decompositional-semantics-initiative  paraphrase/parabank-eval/
                   /ParaBank-Eval-Data (ref.tsv, candidates.tsv)
ptb-sample         NLTK data ``treebank.zip`` (10% PTB sample,     ptb-sample/combined/
                   non-commercial licence)
=================  ==============================================  ==============================
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import shutil
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from paraamr.errors import DataNotFoundError, cli_errors

__all__ = [
    "DATASETS",
    "DATA_HINT",
    "cache_root",
    "data_path",
    "fetch",
    "resolve_data_dir",
    "resolve_paths",
]

log = logging.getLogger(__name__)

#: ``$PARAAMR_CACHE`` when the process started (:func:`resolve_paths` sets it per run)
_STARTED_CACHE = os.environ.get("PARAAMR_CACHE")

PARABANK_EVAL = (
    "https://raw.githubusercontent.com/decompositional-semantics-initiative/"
    "ParaBank-Eval-Data/master/"
)
NLTK_TREEBANK = (
    "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/treebank.zip"
)

DATASETS = {
    "parabank-eval": {
        "files": {
            "ref.tsv": PARABANK_EVAL + "ref.tsv",
            "candidates.tsv": PARABANK_EVAL + "candidates.tsv",
        },
        "dest": "paraphrase/parabank-eval",
    },
    "ptb-sample": {
        "zip": NLTK_TREEBANK,
        "member_prefix": "treebank/combined/",
        "dest": "ptb-sample/combined",
    },
}

DATA_HINT = (
    "Point paths.data_dir= (or PARAAMR_DATA) at a folder holding paraphrase/parabank-eval/ "
    "(ref.tsv, candidates.tsv), run `make data` (or `python -m paraamr.datadir --out data`) "
    "to fetch the public evaluation sets into data/, or score "
    'your own corpora with `make table2 CORPORA="name=FILE[:format] ..."`.'
)


def resolve_data_dir(data_dir: str | os.PathLike | None, project_root: Path | None = None) -> Path:
    """``data_dir``, else ``$PARAAMR_DATA``, else ``<project>/../shared/data``, else
    ``<project>/data`` (where ``make data`` writes), the first that exists."""
    if data_dir:
        p = Path(data_dir).expanduser()
        if not p.is_dir():
            raise DataNotFoundError(f"data_dir {p} does not exist. {DATA_HINT}")
        return p
    if os.environ.get("PARAAMR_DATA"):
        return resolve_data_dir(os.environ["PARAAMR_DATA"])
    root = project_root or Path(__file__).resolve().parents[1]
    candidates = [root.parent / "shared" / "data", root / "data"]
    for p in candidates:
        if p.is_dir():
            return p
    raise DataNotFoundError(
        f"no data found (looked for {', '.join(map(str, candidates))}). {DATA_HINT}"
    )


def resolve_paths(cfg: Any) -> None:
    """Resolve a config's ``paths`` group in place, once, at the entry point (every
    ``experiments/*.py`` through :func:`paraamr.presets.hydra_entry`): ``paths.cache_dir``
    becomes absolute and the caches of this process and its workers live there
    (``$PARAAMR_CACHE``, read by :func:`cache_root`); ``paths.data_dir``
    becomes the folder :func:`resolve_data_dir` finds (a ``data_dir`` that does not exist is a
    :class:`DataNotFoundError` now), or stays ``null`` when no data folder exists (a run on
    your own files needs none; a stage that reads the data then says where it looked, via
    :func:`data_path`). Stages read ``cfg.paths.data_dir`` and never resolve it again.

    >>> from omegaconf import OmegaConf
    >>> cfg = OmegaConf.create({"paths": {"data_dir": "."}})
    >>> resolve_paths(cfg); cfg.paths.data_dir == str(Path(".").resolve())
    True
    """
    paths = cfg.get("paths") if hasattr(cfg, "get") else None
    if paths is None:
        return
    # null: $PARAAMR_CACHE as the process started (a job of an in-process multirun does not
    # inherit the previous job's folder), else .cache; the library's caches follow it
    cache = Path(str(paths.get("cache_dir") or _STARTED_CACHE or ".cache")).expanduser().resolve()
    os.environ["PARAAMR_CACHE"] = str(cache)
    paths.cache_dir = str(cache)
    given = paths.get("data_dir")
    try:
        found: str | None = str(resolve_data_dir(given).resolve())
    except DataNotFoundError:
        if given or os.environ.get("PARAAMR_DATA"):  # a folder named and missing: say so now
            raise
        found = None
    paths.data_dir = found


def cache_root() -> Path:
    """Where the library's model caches live (ONNX exports, the dequantised SmolLM2):
    ``$PARAAMR_CACHE`` (an entry point sets it from ``paths.cache_dir``), else ``.cache`` in
    the working directory (the project root for ``make``).

    >>> cache_root().name in (".cache", os.path.basename(os.environ.get("PARAAMR_CACHE", "")))
    True
    """
    return Path(os.environ.get("PARAAMR_CACHE") or ".cache")


def data_path(data_dir: str | os.PathLike | None, *parts: str | os.PathLike) -> Path:
    """``data_dir / parts`` for a data folder the entry point resolved (``paths.data_dir``);
    ``None`` (no data folder was found) is a :class:`DataNotFoundError` naming the places
    looked in and how to get the data.

    >>> data_path("/data", "paraphrase", "parabank-eval").as_posix()
    '/data/paraphrase/parabank-eval'
    """
    if data_dir is None:
        root = Path(__file__).resolve().parents[1]
        looked = ["$PARAAMR_DATA", str(root.parent / "shared" / "data"), str(root / "data")]
        raise DataNotFoundError(
            f"no data folder: paths.data_dir is null and none was found ({', '.join(looked)}; "
            f"from Python, pass paraamr.datadir.resolve_data_dir()). {DATA_HINT}"
        )
    return Path(data_dir).joinpath(*parts)


def _download(url: str, timeout: float = 60) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (fixed URLs)
            return r.read()
    except OSError as e:
        raise DataNotFoundError(
            f"could not download {url}: {e}. Without network, point "
            "paths.data_dir= at an existing copy of the data."
        ) from e


def fetch(name: str, out_dir: str | Path, urls: dict | None = None) -> Path:
    """Download one data set into ``out_dir/<dest>`` (atomic per file); returns that folder.

    ``urls`` overrides the download addresses (mirrors, or ``file://`` copies).
    """
    spec = {**DATASETS[name], **(urls or {})}
    dest = Path(out_dir) / spec["dest"]
    dest.mkdir(parents=True, exist_ok=True)
    if "files" in spec:
        for fname, url in spec["files"].items():
            tmp = dest / (fname + ".part")
            tmp.write_bytes(_download(url))
            tmp.replace(dest / fname)
    else:
        with zipfile.ZipFile(io.BytesIO(_download(spec["zip"]))) as zf:
            for member in zf.namelist():
                if member.startswith(spec["member_prefix"]) and not member.endswith("/"):
                    target = dest / Path(member).name
                    with zf.open(member) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
    log.info("%s -> %s", name, dest)
    return dest


@cli_errors("python -m paraamr.datadir")
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="fetch the public evaluation sets")
    ap.add_argument("--out", default="data")
    ap.add_argument("names", nargs="*", default=list(DATASETS))
    args = ap.parse_args(argv)
    for n in args.names:
        print(f"{n}: {fetch(n, args.out)}")


if __name__ == "__main__":
    main()
