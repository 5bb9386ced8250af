"""AMR models trained here: a text-to-AMR parser and an AMR-to-text generator, SmolLM2
fine-tuned on the gold graphs of the data folder through the one conditional-generation module.

- :mod:`~paraamr.amrlm.split`: the fixed train / dev / test split of the gold graphs;
- :mod:`~paraamr.amrlm.constraint`: parser decoding that can only write balanced graphs;
- :mod:`~paraamr.amrlm.module`: the module (one per direction);
- :mod:`~paraamr.amrlm.evaluate`: Smatch of the parser, BLEU and cosine of the generator;
- :mod:`~paraamr.amrlm.train`: training from ``conf/amr.yaml``.

Here, light to import (a command checks a model folder before torch loads): the sidecar's name
and :func:`model_dir`, which finds a direction's model in a run folder.
"""

from __future__ import annotations

from pathlib import Path

from paraamr.errors import DataNotFoundError, InputError

__all__ = ["AMR_MODULE_FILE", "READ_TOKENS", "ROLE_OF", "model_dir"]

#: the file a trained AMR model folder holds beside its weights (its settings); light to import,
#: so that a command can check a model folder before torch loads
AMR_MODULE_FILE = "amr_module.json"

#: the most sentence tokens the parser reads when it parses (``amr parse --read-tokens``,
#: ``stog.read_tokens``); it is trained on sentences cut at 96 (``conf/amr.yaml``) and reads
#: longer ones whole (docs/amr.md: whole sentences)
READ_TOKENS = 256

#: the folder (role) each direction's model is trained into under a run folder
ROLE_OF = {"parse": "parser", "generate": "generator"}


def model_dir(path: str | Path, direction: str) -> Path:
    """The model folder of ``direction`` under a run dir, or ``path`` itself.

    >>> try:
    ...     model_dir("/nonexistent/amr", "parse")
    ... except DataNotFoundError as e:
    ...     print(str(e).split(" (")[0])
    /nonexistent/amr: no such model dir
    """
    p = Path(path)
    for cand in (p, p / ROLE_OF[direction] / "model", p / "model"):
        if (cand / AMR_MODULE_FILE).is_file():
            return cand
    if not p.exists():
        raise DataNotFoundError(f"{p}: no such model dir (train the AMR models here: make "
                                f"amr-model AMR_MODEL={p}, 36-39 min on a 2-core CPU)")  # fmt: skip
    raise InputError(f"{p}: no trained AMR {ROLE_OF[direction]} here (no {AMR_MODULE_FILE} in "
                     f"{p}, {p / ROLE_OF[direction] / 'model'})")  # fmt: skip
