"""Builder inputs: every input line is one item (a record or a counted reject), whatever bytes it
holds, so ``items == records + rejects`` and line numbers never shift."""

from __future__ import annotations

import json

import pytest

from paraamr.builder.inputs import read_items
from paraamr.builder.pipeline import BuildConfig, Builder, BuildError, build_shard
from paraamr.testing.fakes import ConceptGenerator

BAD = b"caf\xe9 \xff\xfe broken"  # latin-1 / stray bytes: not UTF-8


def _gold_builder(**kw) -> Builder:
    return Builder(generator=ConceptGenerator(), cfg=BuildConfig(chunk_size=2, **kw), source="x")


class _EchoStog:
    """An AMR "parser" for the input tests: one fixed two-node graph per sentence."""

    def signature(self) -> str:
        return "echo-stog(test)"

    def parse(self, texts):
        return ["(w / want-01 :ARG0 (b / boy))" for _ in texts]


@pytest.mark.parametrize(
    "lines, final_newline, bad",
    [
        ([BAD, b"The boy left.", b"He came back."], True, [1]),
        ([b"The boy left.", BAD, b"He came back."], True, [2]),
        ([b"The boy left.", b"He came back.", BAD], True, [3]),
        ([b"The boy left.", b"He came back.", BAD], False, [3]),
        ([b"The boy left.", BAD, BAD], False, [2, 3]),
    ],
    ids=["first", "middle", "last", "last-no-newline", "last-two-no-newline"],
)
def test_undecodable_lines_become_rejects(tmp_path, lines, final_newline, bad):
    p = tmp_path / "s.txt"
    p.write_bytes(b"\n".join(lines) + (b"\n" if final_newline else b""))
    items = list(read_items(p))
    assert [i.line for i in items] == [1, 2, 3]
    assert [i.line for i in items if i.error] == bad
    assert all("undecodable bytes" in i.error for i in items if i.error)

    b = Builder(generator=ConceptGenerator(), stog=_EchoStog(), cfg=BuildConfig(chunk_size=2))
    state = build_shard(b, p, tmp_path / "out", progress=False)
    c = state["counts"]
    assert c["items"] == 3 == c["records"] + c["rejects"] and c["rejects"] == len(bad)
    rej = [
        json.loads(x)
        for x in (tmp_path / "out" / "shard-00000-of-00001.rejects.jsonl").read_text().splitlines()
    ]
    assert [(r["line"], r["stage"]) for r in rej] == [(n, "input") for n in bad]

    with pytest.raises(BuildError, match=rf"s\.txt:{bad[0]}: input: undecodable bytes"):
        strict = Builder(
            generator=ConceptGenerator(), stog=_EchoStog(), cfg=BuildConfig(on_error="raise")
        )
        strict.source = str(p)
        build_shard(strict, p, tmp_path / "strict", progress=False)


@pytest.mark.parametrize("where", ["graph", "snt", "last-no-newline"])
def test_undecodable_bytes_in_a_penman_block_reject_that_block(tmp_path, where):
    good = b"# ::snt The boy wants.\n(w / want-01 :ARG0 (b / boy))\n"
    if where == "graph":
        bad = b"# ::snt The girl wants.\n(w / want-01\n   :ARG0 (g / girl \xff))\n"
    elif where == "snt":
        bad = b"# ::snt The girl \xe9 wants.\n(w / want-01 :ARG0 (g / girl))\n"
    else:
        bad = b"# ::snt The girl wants.\n(w / want-01 :ARG0 (g / girl \xff))"
    p = tmp_path / "g.amr"
    p.write_bytes(good + b"\n" + bad if where == "last-no-newline" else bad + b"\n" + good)
    items = list(read_items(p))
    assert len(items) == 2
    (bad_item,) = [i for i in items if i.error]
    assert "undecodable bytes" in bad_item.error
    assert bad_item.line == (4 if where == "last-no-newline" else 1)
    state = build_shard(_gold_builder(), p, tmp_path / "out", progress=False)
    c = state["counts"]
    assert c["items"] == 2 and c["records"] == 1 and c["rejects"] == 1
