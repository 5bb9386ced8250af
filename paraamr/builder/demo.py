"""`make build-demo`: gold AMR graphs of "The Little Prince" → re-focused graphs → text, offline.

    python -m paraamr.builder.demo --out results/build-demo [--generator tiny|concepts|MODEL_DIR]

Steps 2-6 of the builder run for real on real gold graphs (step 1, parsing, is skipped: the graphs
are gold). Which generator writes the text decides what the text is worth, and the output says so:

- ``tiny`` (default offline): a randomly initialised T5 in amrlib's model-dir format
  (``make tiny-models``). Its text is garbage by construction; it proves the loading, batching and
  bookkeeping, nothing about paraphrase quality.
- ``concepts``: a rule-based baseline listing the concepts in layout order; shows how re-focusing
  reorders the graph. Not a paraphraser.
- a model dir (e.g. ``models/model_generate_t5wtense`` after ``make models``): real paraphrases.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from paraamr.builder.pipeline import BuildConfig, Builder, build_shard, merge_build
from paraamr.datadir import resolve_data_dir

__all__ = ["run_demo"]

WORTH = {
    "tiny": "GARBAGE BY CONSTRUCTION: a randomly initialised tiny T5 wrote this text. It shows "
    "that the pipeline runs end to end offline, not what ParaAMR paraphrases look like.",
    "concepts": "NOT PARAPHRASES: a rule-based baseline lists each re-focused graph's concepts "
    "in layout order, to show how re-focusing changes the graph's order.",
}


def run_demo(
    out: str,
    generator: str = "tiny",
    n_graphs: int = 20,
    tiny_dir: str = ".cache/tiny-models",
    data_dir: str | None = None,
) -> Path:
    data = resolve_data_dir(data_dir)
    src = (data / "amr" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    blocks = [b for b in src.split("\n\n") if "::snt" in b][:n_graphs]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    inp = out_dir / "input.amr"
    inp.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    if generator == "concepts":
        from paraamr.testing.fakes import ConceptGenerator

        gen, worth = ConceptGenerator(), WORTH["concepts"]
    else:
        from paraamr.builder.models import AmrlibGenerator

        model_dir = str(Path(tiny_dir) / "gtos") if generator == "tiny" else generator
        gen = AmrlibGenerator(model_dir, batch_size=16, device="cpu")
        worth = WORTH.get(generator, f"Text written by the generator in {model_dir}.")
    builder = Builder(
        generator=gen, cfg=BuildConfig(keep_graphs=True, chunk_size=8), source=str(inp)
    )
    for f in out_dir.glob("shard-*"):
        f.unlink()  # a demo always starts fresh
    build_shard(builder, inp, out_dir, input_format="penman", progress=True)
    merge_build(out_dir, 1, out_dir / "corpus.jsonl")
    lines = [f"# build demo ({generator})", "", f"**{worth}**", ""]
    with open(out_dir / "corpus.jsonl", encoding="utf-8") as fh:
        for row in list(map(json.loads, fh))[:5]:
            lines += [f"## line {row['line']}: {row['text']}", ""]
            for p in row["paraphrases"][:4]:
                lines += [f"- focus `{p['focus']}`: `{p['amr']}`", f"  - text: {p['para_text']}"]
            lines.append("")
    md = out_dir / "demo.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    print(md.read_text())
    return md


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/build-demo")
    ap.add_argument("--generator", default="tiny")
    ap.add_argument("--n-graphs", type=int, default=20)
    ap.add_argument("--tiny-dir", default=".cache/tiny-models")
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args(argv)
    run_demo(a.out, a.generator, a.n_graphs, a.tiny_dir, a.data_dir)


if __name__ == "__main__":
    main()
