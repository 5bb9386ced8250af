"""``paraamr amr parse`` and ``paraamr amr generate``: the trained AMR models on your text.

- ``parse --model DIR``: one sentence a line in (``--input`` or stdin); out, in the same
  order, one PENMAN graph per input line as blank-line-separated blocks with ``# ::snt``. A
  line that yields no graph (empty, or an answer that does not deserialize) gets the one-node
  placeholder ``(e / amr-empty)`` and is counted on stderr, so the output stays aligned.
  ``--output FILE`` writes the blocks chunk by chunk instead of stdout; rerun after a kill, it
  continues after the last whole block (:func:`parse_to_file`).
- ``generate --model DIR``: PENMAN blocks in, one sentence a line out. A block that does not
  decode is an empty line and a count on stderr (``--on-error raise``: a one-line error
  naming the file and line).
- ``--num-beams N`` (both): beam search with ``N`` beams instead of the model's own setting
  (inside the parser's constraint, as :meth:`paraamr.amrlm.module.AMRModule.generate`).
- ``--dtype SETTING`` (both): the precision of the decoding (``fp32``, the default; ``bf16``;
  ``auto``: bf16 where the CPU or GPU runs it natively;
  :meth:`paraamr.amrlm.module.AMRModule.set_precision`).

``DIR`` is a run's folder (``experiments/train_amr.py out_dir=DIR``: the model is found under
``DIR/parser/model`` or ``DIR/generator/model``) or a model folder itself.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from paraamr.amr.serialize import PLACEHOLDER
from paraamr.amrlm import READ_TOKENS, model_dir
from paraamr.errors import InputError
from paraamr.utils import whole_number

__all__ = ["add_amr_parser", "run_amr", "parse_lines", "parse_to_file", "resume_point",
           "read_graph_blocks", "generate_blocks", "PLACEHOLDER",
           "report_clipped"]  # fmt: skip


def add_amr_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``amr parse`` / ``amr generate`` to the ``paraamr`` subcommands."""
    p = sub.add_parser("amr", help="AMR models trained here: parse sentences, generate from graphs",
                       description=__doc__.split("\n\n")[0])  # fmt: skip
    cmds = p.add_subparsers(dest="amr_cmd", required=True)
    for name, what in (("parse", "one sentence a line"), ("generate", "PENMAN blocks")):
        c = cmds.add_parser(name, help=f"{what} in (--input or stdin)")
        c.add_argument("--model", required=True, metavar="DIR",
                       help="a train_amr.py run dir or a model dir")  # fmt: skip
        c.add_argument("--input", default="-", metavar="FILE", help=f"{what} (default: stdin)")
        batch = 64 if name == "parse" else 16  # make bench-decode: sentences in, graphs out
        c.add_argument("--batch-size", type=whole_number(1), default=batch, metavar="N",
                       help=f"inputs per batch, sorted by length (default: {batch})")  # fmt: skip
        c.add_argument(
            "--on-error",
            default="skip",
            choices=("raise", "skip"),
            metavar="MODE",
            help="no graph for a line: skip (a counted placeholder, the default) or raise",
        )
        c.add_argument("--progress", action="store_true", help="a progress bar on stderr")
        c.add_argument("--num-beams", type=whole_number(1), default=None, metavar="N",
                       help="beam search with N beams (default: the model's setting, greedy "
                       "as trained)")  # fmt: skip
        c.add_argument("--dtype", default=None, choices=("fp32", "bf16", "auto"), metavar="P",
                       help="precision of the decoding: fp32 (default), bf16 (bf16 weights), "
                       "auto (bf16 where native)")  # fmt: skip
        engines = ("hf", "openvino", "openvino-f32", "openvino-bf16", "genai", "genai-f32",
                   "genai-bf16")  # fmt: skip
        c.add_argument("--engine", default="hf", choices=engines, metavar="E",
                       help="what decodes: hf (PyTorch, the default), openvino or openvino-f32 "
                       "(the model's OpenVINO IR, exported once beside it; greedy only), "
                       "openvino-bf16 (the same in bf16; two cores or more), genai, genai-bf16 "
                       "(the IR under OpenVINO GenAI's pipeline; the parser under the graph "
                       "grammar; a generator only without its no-repeat rule)")  # fmt: skip
    cmds.choices["parse"].add_argument(
        "--constraint",
        default=None,
        choices=("brackets", "grammar"),
        metavar="C",
        help="the parser's decoding rule: brackets (balanced, closed within the answer cap; "
        "the model's setting) or grammar (paraamr.amrlm.grammar: AMR roles; genai runs it "
        "always)",
    )
    cmds.choices["parse"].add_argument(
        "--read-tokens", type=whole_number(1), default=READ_TOKENS, metavar="N",
        help=f"read at most N tokens of a sentence (default: {READ_TOKENS}; the parser was "
        "trained on sentences cut at 96)")  # fmt: skip
    cmds.choices["parse"].add_argument(
        "--output", default=None, metavar="FILE",
        help="write the graphs here chunk by chunk (a rerun after a kill continues) instead "
        "of stdout")  # fmt: skip
    return p


def _read_text(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p}: is a directory, not a file")
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except UnicodeDecodeError as e:
        line = p.read_bytes()[: e.start].count(b"\n") + 1
        raise InputError(f"{p}:{line}: not UTF-8") from None


def run_amr(a: argparse.Namespace) -> None:
    """Run ``paraamr amr parse|generate`` (see the module docstring)."""
    import logging

    # penman warns once per edge a parsed graph states twice; the parse commands count them
    logging.getLogger("penman.layout").setLevel(logging.ERROR)
    text, name = _read_text(a.input)
    if not text.strip():
        raise InputError(f"{name}: no input (empty)")
    direction = a.amr_cmd
    where = model_dir(a.model, direction)  # input and model dir checked before the model loads
    if direction == "parse":
        lines = text.splitlines()
        if a.output:
            module = _load(where, a.num_beams, a.dtype, a.engine, a.read_tokens, a.constraint)
            s = module.settings
            decoding = {"model": str(where.resolve()), "read_tokens": s["max_source_length"],
                        "answer_cap": s.get("answer_cap"), "stop_loops": s.get("stop_loops"),
                        "num_beams": s.get("num_beams"), "dtype": a.dtype or "fp32",
                        "engine": a.engine, "constraint": s.get("constraint")}  # fmt: skip
            res = parse_to_file(module, lines, a.output, a.batch_size, a.on_error, name,
                                a.progress, decoding=decoding)  # fmt: skip
            if res["resumed"]:
                print(f"amr parse: {a.output} held {res['resumed']} of {res['lines']} graphs; "
                      f"parsed the other {res['parsed']}", file=sys.stderr)  # fmt: skip
        else:
            module = _load(where, a.num_beams, a.dtype, a.engine, a.read_tokens, a.constraint)
            blocks = parse_lines(module, lines, a.batch_size, a.on_error, name, a.progress)
            print("\n\n".join(blocks))
    else:
        blocks = read_graph_blocks(text, a.on_error, name)
        if not any(b.graph is not None for b in blocks):  # nothing to generate: no model
            first = f"; first: {name}:{blocks[0].line}" if blocks else ""
            raise InputError(f"{name}: none of its {len(blocks)} graphs decodes{first}")
        module = _load(where, a.num_beams, a.dtype, a.engine)
        for sentence in generate_blocks(module, blocks, a.batch_size, name, a.progress):
            print(sentence)


def _load(where: Path, num_beams: int | None = None, dtype: str | None = None,
          engine: str = "hf", read_tokens: int | None = None,
          constraint: str | None = None) -> Any:  # fmt: skip
    """The saved module, decoding with ``num_beams`` beams where given, in ``dtype``, on
    ``engine`` (``hf``, ``openvino``, ``openvino-bf16``, ``genai``, ``genai-bf16``:
    :mod:`paraamr.lms.engines`), reading ``read_tokens`` source tokens where given, a parser
    under ``constraint`` where given (``brackets`` | ``grammar``)."""
    from transformers.utils import logging as hf_logging

    from paraamr.amrlm.module import AMRModule

    hf_logging.disable_progress_bar()  # stderr keeps the counts and errors only
    module = AMRModule.from_saved(where)
    module.set_read_limit(read_tokens, "--read-tokens")
    if num_beams is not None or constraint is not None:
        s = module.settings
        module.set_decoding(s["answer_cap"], s["no_repeat_words"], stop_loops=s.get("stop_loops"),
                            num_beams=num_beams or s["num_beams"],
                            constraint=constraint)  # fmt: skip
    module.set_precision(dtype, "--dtype")
    name, _, precision = engine.partition("-")
    module.set_engine({"name": name, "precision": precision or "f32"}, "--engine")
    return module


def report_clipped(module: Any, prompts: list[str], what: str, command: str) -> int:
    """Count (on stderr) the prompts longer than the model reads (``max_source_length``
    tokens: the rest is cut before decoding); returns the count."""
    limit = module.settings["max_source_length"]
    n = sum(len(module.units(p)) > limit for p in prompts)
    if n:
        print(f"amr {command}: {n} of {len(prompts)} {what} are longer than the model reads "
              f"({limit} tokens): only their first {limit} tokens were read",
              file=sys.stderr)  # fmt: skip
    return n


def _parse_chunk(
    module: Any, lines: list[str], batch_size: int, on_error: str, name: str,
    first_line: int = 1, progress: bool = False,
) -> tuple[list[str], Counter[str]]:  # fmt: skip
    """The blocks of ``lines`` and their counts: ``empty`` lines and ``failed`` answers (both
    got the placeholder), ``repeated`` graphs that state one edge twice (written as parsed);
    ``first_line``: the file line of ``lines[0]`` (for the errors)."""
    import logging

    import penman

    from paraamr.amr.serialize import deserialize, states_an_edge_twice
    from paraamr.lms.answers import answers
    from paraamr.utils import logger_level

    todo = [i for i, s in enumerate(lines) if s.strip()]
    outs = answers(module, [lines[i].strip() for i in todo], batch_size, progress)
    graphs: dict[int, Any] = {i: deserialize(o) for i, o in zip(todo, outs, strict=True)}
    blocks: list[str] = []
    counts: Counter[str] = Counter()
    for i, sentence in enumerate(lines):
        g = graphs.get(i)
        if g is None:
            if on_error == "raise":
                why = "empty line" if not sentence.strip() else "the answer is no AMR graph"
                raise InputError(f"{name}:{first_line + i}: {why}")
            counts["empty" if not sentence.strip() else "failed"] += 1
        body = PLACEHOLDER if g is None else penman.encode(penman.Graph(g.triples, top=g.top))
        if g is not None:  # counted as the file will be read (penman warns once per edge)
            with logger_level("penman.layout", logging.ERROR):
                counts["repeated"] += states_an_edge_twice(penman.decode(body))
        blocks.append(f"# ::snt {sentence.strip()}".rstrip() + f"\n{body}")
    return blocks, counts


def _report_counts(counts: Counter[str], total: int) -> None:
    """The placeholders and the graphs with a repeated edge, on stderr."""
    empty, failed = counts["empty"], counts["failed"]
    if empty or failed:
        print(f"amr parse: {empty + failed} of {total} lines got the placeholder graph "
              f"({empty} empty, {failed} answers not a graph)", file=sys.stderr)  # fmt: skip
    if counts["repeated"]:
        print(f"amr parse: {counts['repeated']} of {total} graphs state an edge twice (written "
              "as parsed; the builder reads it once)", file=sys.stderr)  # fmt: skip


def parse_lines(module: Any, lines: list[str], batch_size: int = 16, on_error: str = "skip",
                name: str = "<input>", progress: bool = False) -> list[str]:  # fmt: skip
    """One PENMAN block (``# ::snt`` + graph) per line, placeholders counted on stderr."""
    report_clipped(module, [s.strip() for s in lines if s.strip()], "sentences", "parse")
    blocks, counts = _parse_chunk(module, lines, batch_size, on_error, name, 1, progress)
    _report_counts(counts, len(lines))
    return blocks


def resume_point(out: Path, lines: list[str]) -> int:
    """How many of ``lines`` ``out`` already holds as whole blocks; a block cut short by a
    killed run is removed from the file. A block whose ``# ::snt`` is not its input line is an
    :class:`~paraamr.errors.InputError` (the file holds another input's graphs)."""
    if not out.is_file():
        return 0
    text = out.read_text(encoding="utf-8")
    end = text.rfind("\n\n") + 2 if "\n\n" in text else 0
    blocks = text[:end].split("\n\n")[:-1]
    for k, block in enumerate(blocks):
        said = block.split("\n", 1)[0].removeprefix("# ::snt").strip()
        if k >= len(lines) or said != lines[k].strip():
            raise InputError(f"{out}: block {k + 1} is not the graph of input line {k + 1}: "
                             "the file holds another input's graphs (remove it to start "
                             "again)")  # fmt: skip
    if end < len(text):
        with open(out, "r+b") as fh:
            fh.truncate(len(text[:end].encode("utf-8")))
    return len(blocks)


def decoding_file(out: str | Path) -> Path:
    """Where :func:`parse_to_file` records the decoding settings of ``out``'s graphs."""
    out = Path(out)
    return out.with_name(out.name + ".decoding.json")


def check_decoding(out: Path, decoding: dict[str, Any], done: int) -> None:
    """Refuse to continue ``out`` (``done`` graphs) under other decoding settings than the ones
    recorded beside it; record them when it starts."""
    import json

    from paraamr.utils import write_json_atomic

    record = decoding_file(out)
    if done and record.is_file():
        before = json.loads(record.read_text(encoding="utf-8"))
        if before != decoding:
            diff = {k: (before.get(k), v) for k, v in decoding.items() if before.get(k) != v}
            raise InputError(f"{out}: its {done} graphs were parsed with other decoding settings "
                             f"(before, now: {diff}); rerun with the same ones or remove the "
                             "file to start again")  # fmt: skip
    elif done:
        print(f"amr parse: {out} holds {done} graphs and no record of their decoding settings "
              f"({record.name}); continuing with {decoding}", file=sys.stderr)  # fmt: skip
    write_json_atomic(record, decoding)


def parse_to_file(module: Any, lines: list[str], out: str | Path, batch_size: int = 16,
                  on_error: str = "skip", name: str = "<input>", progress: bool = False,
                  chunk_size: int = 256,
                  decoding: dict[str, Any] | None = None) -> dict[str, int]:  # fmt: skip
    """:func:`parse_lines` into ``out``, ``chunk_size`` lines at a time in input order (each
    chunk batched by length), every chunk appended and synced before the next: a killed run
    rerun with the same input continues after the last whole block (:func:`resume_point`) and
    writes what one uninterrupted run writes. ``decoding`` (the settings that change a graph)
    is recorded beside ``out`` (:func:`decoding_file`), and a rerun under other ones is
    refused. Returns ``{"resumed", "parsed", "lines"}``."""
    import os

    from tqdm import tqdm

    out = Path(out)
    done = resume_point(out, lines)
    if decoding is not None:
        check_decoding(out, decoding, done)
    report_clipped(module, [s.strip() for s in lines[done:] if s.strip()], "sentences", "parse")
    counts: Counter[str] = Counter()
    bar = tqdm(total=len(lines), initial=done, desc="parse", disable=not progress)
    with open(out, "a", encoding="utf-8") as fh:
        for start in range(done, len(lines), chunk_size):
            chunk = lines[start : start + chunk_size]
            blocks, found = _parse_chunk(module, chunk, batch_size, on_error, name, start + 1)
            fh.write("".join(b + "\n\n" for b in blocks))
            fh.flush()
            os.fsync(fh.fileno())
            counts += found
            bar.update(len(chunk))
    bar.close()
    _report_counts(counts, len(lines) - done)
    return {"resumed": done, "parsed": len(lines) - done, "lines": len(lines)}


def read_graph_blocks(text: str, on_error: str = "skip", name: str = "<input>") -> list[Any]:
    """The PENMAN blocks of ``text`` (:func:`paraamr.amr.io.read_penman_blocks`); with
    ``on_error="raise"`` the first that does not decode is a one-line error."""
    from paraamr.amr.io import read_penman_blocks

    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as fh:
        fh.write(text)
    try:
        blocks = list(read_penman_blocks(fh.name))
    finally:
        Path(fh.name).unlink()
    if not blocks:
        raise InputError(f"{name}: no PENMAN graph in the input")
    bad = [b for b in blocks if b.graph is None]
    if bad and on_error == "raise":
        raise InputError(f"{name}:{bad[0].line}: {str(bad[0].error).split(': ', 2)[-1]}")
    return blocks


def generate_blocks(module: Any, blocks: list[Any], batch_size: int = 16,
                    name: str = "<input>", progress: bool = False) -> list[str]:  # fmt: skip
    """One sentence per block (an empty line for a block that does not decode, counted on
    stderr)."""
    from paraamr.amr.refocus import linearize
    from paraamr.lms.answers import answers

    good = [b for b in blocks if b.graph is not None]
    bad = [b for b in blocks if b.graph is None]
    prompts = [module.graph_prompt(linearize(b.graph)) for b in good]
    report_clipped(module, prompts, "graphs", "generate")
    outs = answers(module, prompts, batch_size, progress)
    by_line = {b.line: o for b, o in zip(good, outs, strict=True)}
    if bad:
        print(f"amr generate: {len(bad)} of {len(blocks)} graphs do not decode (empty lines; "
              f"first: {name}:{bad[0].line})", file=sys.stderr)  # fmt: skip
    return [by_line.get(b.line, "") for b in blocks]
