"""Write a human-evaluation kit: the blind items in the forms people answer them in.

``write_kit(sample, out)`` writes::

    out/annotate.html        one self-contained page (no server, no network; open it from disk)
    out/mturk/template.html  the MTurk HIT layout (crowd-html), ${item_id} ${source} ${paraphrase}
    out/mturk/input.csv      the batch: item_id,source,paraphrase
    out/key.jsonl            the answer key (corpus of every item): keep it from annotators
    out/manifest.json        kit id, signature, corpora, n, seed, checks, counts

What annotators see (the page, the batch) holds ids, sentences and the questions only: no corpus
name, no order that would reveal one.
"""

from __future__ import annotations

import csv
import html
import json
import os
from importlib import resources
from pathlib import Path

from paraamr.errors import InputError
from paraamr.humaneval.questions import INSTRUCTIONS, QUESTIONS, Question
from paraamr.humaneval.sample import CHECK_EXPECTED, Sample
from paraamr.signature import Signature, package_versions
from paraamr.utils import write_json_atomic, write_text_atomic

__all__ = ["write_kit", "render_page", "render_mturk", "kit_signature", "KIT_FILES"]

#: the files of a kit, relative to its folder
KIT_FILES = (
    "annotate.html",
    "mturk/template.html",
    "mturk/input.csv",
    "key.jsonl",
    "manifest.json",
)


def _asset(name: str) -> str:
    return resources.files("paraamr.humaneval").joinpath("assets", name).read_text("utf-8")


def _instructions_html() -> str:
    parts = [f"<p>{html.escape(INSTRUCTIONS)}</p>"]
    for q in QUESTIONS:
        parts.append(f"<h2>{html.escape(q.title)}</h2>")
        parts.append(f"<p>{html.escape(q.prompt)}</p><ul>")
        parts += [f"<li><b>{s}</b>: {html.escape(text)}</li>" for s, text in q.choices]
        parts.append("</ul>")
    return "\n".join(parts)


def _question_html(q: Question, required: bool) -> str:
    req = " required" if required else ""
    rows = [f'<fieldset id="q-{q.field}">', f"<legend>{html.escape(q.title)}: "
            f"{html.escape(q.prompt)}</legend>"]  # fmt: skip
    for score, text in q.choices:
        rows.append(
            f'<label class="choice" for="{q.field}-{score}"><input type="radio" '
            f'id="{q.field}-{score}" name="{q.field}" value="{score}"{req}> '
            f"<span><b>{score}</b>: {html.escape(text)}</span></label>"
        )
    rows.append("</fieldset>")
    return "\n".join(rows)


def _script_json(obj: object) -> str:
    """JSON safe inside ``<script>``: ``</`` and ``<!--`` cannot end or confuse the element."""
    return json.dumps(obj, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")


def render_page(sample: Sample) -> str:
    """The annotation page of a sample (items in their shuffled order, ids and sentences only)."""
    data = {
        "kit": sample.id,
        "questions": [q.field for q in QUESTIONS],
        "items": [
            {"id": k.item_id, "source": k.source, "paraphrase": k.paraphrase} for k in sample.items
        ],  # fmt: skip
    }
    page = _asset("annotate.html")
    for name, value in (
        ("CSS", _asset("annotate.css")),
        ("JS", _asset("annotate.js")),
        ("INSTRUCTIONS", _instructions_html()),
        ("QUESTIONS", "\n".join(_question_html(q, required=False) for q in QUESTIONS)),
        ("DATA", _script_json(data)),
    ):
        page = page.replace("{{" + name + "}}", value)
    return page


def render_mturk() -> str:
    """The MTurk HIT template: the paper's instructions and questions (answers required)."""
    page = _asset("mturk.html").replace("{{INSTRUCTIONS}}", _instructions_html())
    return page.replace("{{QUESTIONS}}", "\n".join(_question_html(q, True) for q in QUESTIONS))


def kit_signature(sample: Sample, filters: str = "no-copies") -> Signature:
    """How the kit was drawn: corpora, n, seed, checks, filters, package version."""
    n_checks = sum(k.is_check for k in sample.items) // len(CHECK_EXPECTED)
    return Signature.build(
        ("paraamr", package_versions()["paraamr"]),
        ("kit", sample.id),
        ("corpora", "+".join(sample.corpora)),
        ("n", sample.n),
        ("seed", sample.seed),
        ("checks", n_checks),
        ("filters", filters),
    )


def write_kit(
    sample: Sample, out: str | os.PathLike, sources: dict[str, str] | None = None
) -> dict[str, Path]:
    """Write the kit folder (see the module docstring); ``sources`` names each corpus's file.

    Refuses to overwrite a folder that already holds another kit's key (answers collected on
    it would no longer score)."""
    out = Path(out)
    key_path = out / "key.jsonl"
    if (out / "manifest.json").is_file():
        old = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("kit")
        if old != sample.id:
            raise InputError(
                f"{out} already holds kit {old}; answers collected on it would not match "
                "a new key. Use another --out folder."
            )
    (out / "mturk").mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "annotate.html", render_page(sample))
    write_text_atomic(out / "mturk" / "template.html", render_mturk())
    tmp = out / "mturk" / "input.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("item_id", "source", "paraphrase"))
        w.writerows((k.item_id, k.source, k.paraphrase) for k in sample.items)
    os.replace(tmp, out / "mturk" / "input.csv")
    write_text_atomic(
        key_path,
        "".join(json.dumps(k.to_json(), ensure_ascii=False) + "\n" for k in sample.items),
    )
    n_checks = sum(k.is_check for k in sample.items)
    write_json_atomic(
        out / "manifest.json",
        {
            "kit": sample.id,
            "signature": kit_signature(sample),
            "corpora": list(sample.corpora),
            "corpus_files": dict(sources or {}),
            "n_per_corpus": sample.n,
            "seed": sample.seed,
            "n_common_sources": sample.n_common,
            "n_items": len(sample.items),
            "n_check_items": n_checks,
            "questions": [q.field for q in QUESTIONS],
        },
    )
    return {name: out / name for name in KIT_FILES}
