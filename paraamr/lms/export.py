"""A trained decoder-only model's OpenVINO IR, exported once and reused: the stateful graph
(key/value cache kept inside the model, rows chosen by ``beam_idx``) that optimum-intel's
exporter writes for ``text-generation-with-past``, in f32.

The exporter pins another transformers than the lock's, so it runs in its own environment,
``.venv/export`` (``make setup`` builds it from ``requirements/export.txt``: five packages laid
over ``.venv``), as a subprocess; this process never imports it. ``PARAAMR_EXPORT_PYTHON``
names another interpreter.

The IR goes beside the model, ``<model>/openvino/<key>/``, where ``key`` is the SHA-256 of the
model's weights and config and of the exporter's versions: a model trained again, or another
exporter, gets a new folder; the same ones reuse it. ``export.json`` there records the key, the
versions, the command and the seconds it took.

>>> export_key("ab" * 32, {"optimum-intel": "2.2.0", "transformers": "5.5.4", "openvino": "1"})
'e062a106ff33'
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from paraamr.errors import DataNotFoundError, ParaAMRError
from paraamr.utils import write_json_atomic

__all__ = [
    "ExportError",
    "export_python",
    "exporter_versions",
    "weights_digest",
    "export_key",
    "openvino_ir",
    "IR_FILE",
]

log = logging.getLogger(__name__)

IR_FILE = "openvino_model.xml"
RECORD = "export.json"
#: the packages whose versions shape the exported graph
EXPORTER_PACKAGES = (
    "optimum-intel", "optimum", "transformers", "openvino", "openvino-tokenizers", "torch",
)  # fmt: skip
#: how the graph is exported (in the key: another task or format is another graph)
EXPORT_ARGS = ("--task", "text-generation-with-past", "--weight-format", "fp32")
#: the model files the graph is made from (the tokenizer's IR, which openvino-tokenizers
#: writes beside it for OpenVINO GenAI, follows the tokenizer files, which training never
#: changes; prompts are tokenized by the Hugging Face tokenizer in this process)
WEIGHT_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")


class ExportError(ParaAMRError):
    """The OpenVINO export failed or its environment is missing (one line: what and where)."""


def export_python() -> Path:
    """The interpreter of the export environment: ``PARAAMR_EXPORT_PYTHON``, else
    ``<this venv>/export/bin/python``."""
    env = os.environ.get("PARAAMR_EXPORT_PYTHON")
    return Path(env) if env else Path(sys.prefix) / "export" / "bin" / "python"


@functools.lru_cache(maxsize=4)
def exporter_versions(python: str) -> dict[str, str]:
    """The versions of :data:`EXPORTER_PACKAGES` in the environment of ``python``."""
    if not Path(python).is_file():
        raise ExportError(
            f"{python}: no OpenVINO export environment (make setup builds it in .venv/export; "
            "or set PARAAMR_EXPORT_PYTHON)"
        )
    code = (
        "import json, importlib.metadata as m; "
        f"print(json.dumps({{p: m.version(p) for p in {list(EXPORTER_PACKAGES)!r}}}))"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ExportError(f"{python}: the export environment is broken ({last}); run make setup")
    return json.loads(done.stdout)


def weights_digest(model_dir: str | Path) -> str:
    """SHA-256 over the model's config and weight files (name and bytes, in a fixed order)."""
    model_dir = Path(model_dir)
    files = [model_dir / n for n in WEIGHT_FILES if (model_dir / n).is_file()]
    if not any(f.name != "config.json" for f in files):
        raise DataNotFoundError(f"{model_dir}: no model weights to export (model.safetensors)")
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        with f.open("rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def export_key(digest: str, versions: dict[str, str]) -> str:
    """12 hex digits naming the weights, the exporter's versions and its options."""
    text = json.dumps([digest, sorted(versions.items()), list(EXPORT_ARGS)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def openvino_ir(model_dir: str | Path, python: str | Path | None = None) -> Path:
    """The folder of ``model_dir``'s OpenVINO IR, exported on first use (see the module
    docstring); a missing environment or a failed export is an :class:`ExportError` naming the
    folder and the log."""
    model_dir = Path(model_dir)
    python = str(python or export_python())
    versions = exporter_versions(python)
    key = export_key(weights_digest(model_dir), versions)
    out = model_dir / "openvino" / key
    if (out / RECORD).is_file() and (out / IR_FILE).is_file():
        return out
    # a folder of this process's own: two processes exporting one model never share one
    part = out.with_name(f"{key}.part-{os.getpid()}")
    shutil.rmtree(part, ignore_errors=True)
    part.parent.mkdir(parents=True, exist_ok=True)
    logfile = out.with_name(f"{key}.log")
    cmd = [python, "-m", "optimum.commands.optimum_cli", "export", "openvino", "--model",
           str(model_dir), *EXPORT_ARGS, str(part)]  # fmt: skip
    log.info("exporting %s to OpenVINO (once; %s)", model_dir, out)
    t0 = time.perf_counter()
    with logfile.open("w", encoding="utf-8") as fh:
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
    if done.returncode != 0 or not (part / IR_FILE).is_file():
        shutil.rmtree(part, ignore_errors=True)
        lines = logfile.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        last = lines[-1] if lines else "no output"
        raise ExportError(
            f"{model_dir}: OpenVINO export failed (exit {done.returncode}: {last}); log: {logfile}"
        )
    record = {"key": key, "model_dir": str(model_dir), "versions": versions, "command": cmd,
              "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
    write_json_atomic(part / RECORD, record, sort_keys=False)
    if out.exists() and not (out / RECORD).is_file():  # an export that did not finish
        shutil.rmtree(out)
    try:
        part.rename(out)
    except OSError:  # another process finished the same export first: keep its folder
        shutil.rmtree(part, ignore_errors=True)
        if not (out / RECORD).is_file():
            raise
    return out
