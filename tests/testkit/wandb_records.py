"""Read back what an offline W&B run recorded (its ``run-*.wandb`` file), for tests.

The file is wandb's record log: a 7-byte header (``:W&B``, magic, version), then LevelDB-style
32 KiB blocks of chunks (CRC, length, type: full / first / middle / last), each record a
``wandb_internal_pb2.Record``. The run record gives project, group, name and config; summary
records give the summary (later updates win).
"""

from __future__ import annotations

import json
import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["records", "read_offline_run"]

_BLOCK = 32768
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def records(path: str | os.PathLike) -> Iterator[object]:
    """The protobuf records of a ``run-*.wandb`` file, in order."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = Path(path).read_bytes()
    if data[:4] != b":W&B":
        raise ValueError(f"{path} is not a wandb run file")
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        if _BLOCK - pos % _BLOCK < 7:  # block trailer: padding
            pos += _BLOCK - pos % _BLOCK
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind in (_FIRST, _MIDDLE):
            buf = chunk if kind == _FIRST else buf + chunk
            continue
        if kind not in (_FULL, _LAST):
            break
        rec = pb.Record()
        rec.ParseFromString(chunk if kind == _FULL else buf + chunk)
        yield rec


def read_offline_run(run_dir: str | os.PathLike, wait_s: float = 60.0) -> dict:
    """``{"project", "group", "name", "config", "summary"}`` of an ``offline-run-*`` directory.

    wandb's service may still be writing the file when ``finish`` returns: this waits (up to
    ``wait_s``) until the file holds the run record and the exit record.
    """
    (path,) = Path(run_dir).glob("run-*.wandb")
    deadline = time.monotonic() + wait_s
    while True:
        out = _read(path)
        if ("project" in out and out.pop("exited")) or time.monotonic() > deadline:
            out.pop("exited", None)
            return out
        time.sleep(0.2)


def _read(path: Path) -> dict:
    out: dict = {"config": {}, "summary": {}, "exited": False}
    for rec in records(path):
        kind = rec.WhichOneof("record_type")
        if kind == "run":
            r = rec.run
            out.update(project=r.project, group=r.run_group, name=r.display_name)
            out["config"].update(
                {i.key: json.loads(i.value_json) for i in r.config.update if i.key != "_wandb"}
            )
        elif kind == "exit":
            out["exited"] = True
        elif kind == "summary":
            for i in rec.summary.update:
                if i.key and not i.key.startswith("_"):
                    out["summary"][i.key] = json.loads(i.value_json)
    return out
