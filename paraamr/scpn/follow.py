"""Does a paraphraser follow the templates a user gives it? The check a newcomer runs.

For the first ``limit`` pairs of a test set, each source gets the depth-``depth`` template of
*another* pair's reference parse (pair ``i`` gets pair ``(i + n // 2) mod n``'s,
:func:`paraamr.scpn.evaluate.swapped_order`), through the same path as ``paraamr paraphrase``
(:class:`~paraamr.scpn.paraphrase.Paraphraser`, one template per sentence). The outputs are
parsed again and their depth-``depth`` template compared with the one they were given:

- ``match_swapped``: share of outputs whose template is exactly the given (swapped) one;
- ``copy_match_swapped``: the same share for the sources themselves (what copying scores);
- ``match_own``: the same check with each pair's own reference template (no swap), and
  ``copy_match_own`` for copying.

Outputs that are empty or do not parse count as misses (``unparsed``).

    python -m paraamr.scpn.follow --model results/scpn/.../best_model --test-set quora \\
        --limit 100 --out results/follow.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paraamr.errors import cli_errors
from paraamr.utils import whole_number, write_json_atomic

__all__ = ["follow_check", "main"]


def _templates(sentences: Sequence[str], parser: Any, depth: int) -> list[str | None]:
    from paraamr.parsers.base import parse_unique
    from paraamr.scpn.formats import linearize

    parsed = parse_unique([s for s in sentences if s.strip()], parser)
    out: list[str | None] = []
    for s in sentences:
        res = parsed.get(s)
        out.append(
            None if res is None or isinstance(res, Exception) else linearize(res.tree, depth)
        )
    return out


def follow_check(
    paraphraser: Any, pairs: Sequence[tuple[str, str]], parser: Any, depth: int = 3
) -> dict[str, Any]:
    """Template-following shares of ``paraphraser`` on ``(source, reference)`` pairs.

    Returns ``{"n", "depth", "match_swapped", "copy_match_swapped", "match_own",
    "copy_match_own", "unparsed", "rows"}``; ``rows`` has each source, given template and output.
    """
    from paraamr.scpn.evaluate import swapped_order

    sources = [s for s, _ in pairs]
    ref_t = _templates([r for _, r in pairs], parser, depth)
    src_t = _templates(sources, parser, depth)
    keep = [i for i, t in enumerate(ref_t) if t is not None]
    sources = [sources[i] for i in keep]
    ref_t, src_t = [ref_t[i] for i in keep], [src_t[i] for i in keep]
    n = len(sources)
    swapped = [ref_t[j] for j in swapped_order(n)]
    result: dict[str, Any] = {"n": n, "depth": depth, "dropped_unparsed_references":
                              len(pairs) - n}  # fmt: skip
    rows: list[dict] = []
    for name, given in (("swapped", swapped), ("own", ref_t)):
        out = paraphraser.paraphrase(sources, given, per_sentence=True)
        texts = [r["output"] or "" for r in out]
        got = _templates(texts, parser, depth)
        result[f"match_{name}"] = sum(g == t for g, t in zip(got, given, strict=True)) / n
        result[f"copy_match_{name}"] = sum(s == t for s, t in zip(src_t, given, strict=True)) / n
        result[f"unparsed_{name}"] = sum(g is None for g in got)
        if name == "swapped":
            rows = [{"source": s, "template": t, "output": o, "output_template": g}
                    for s, t, o, g in zip(sources, given, texts, got, strict=True)]  # fmt: skip
    result["answers"] = dict(getattr(getattr(paraphraser, "module", None), "answer_counts", {}))
    result["rows"] = rows
    return result


PROG = "python -m paraamr.scpn.follow"


@cli_errors(PROG)
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a trained SCPN dir (training's best_model)")
    ap.add_argument("--test-set", default="quora", help="quora, mrpc or pan")
    ap.add_argument("--limit", type=whole_number(0), default=100,
                    help="the first N pairs of the test set (0: all)")  # fmt: skip
    ap.add_argument("--depth", type=int, default=3, help="template depth (the paper's: 3)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="write the result (with rows) as JSON here")
    a = ap.parse_args(argv)
    from paraamr.datadir import resolve_data_dir
    from paraamr.parsers.spacy_backend import SpacyParser
    from paraamr.scpn.evaluate import load_test_set
    from paraamr.scpn.paraphrase import Paraphraser

    data = resolve_data_dir(a.data_dir)
    pairs = load_test_set(a.test_set, data, a.limit or None)  # 0: all, as --limit says
    parser = SpacyParser()
    p = Paraphraser.load(a.model, batch_size=a.batch_size, parser=parser)
    res = follow_check(p, pairs, parser, a.depth)
    summary = {k: v for k, v in res.items() if k != "rows"}
    print(json.dumps(summary, indent=2))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(a.out, res, sort_keys=False)


if __name__ == "__main__":
    main()
