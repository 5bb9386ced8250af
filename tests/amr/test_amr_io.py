"""The one PENMAN block reader: what is malformed, at which line, and that the builder's gold-graph
input and :func:`read_amr_file` apply the same rules."""

from __future__ import annotations

import pytest

from paraamr.amr import AMRError, read_amr_file, read_penman_blocks
from paraamr.builder.inputs import read_penman_items

BLOCKS = [
    b"# a file header\n# only comments\n",
    b"# ::snt Dogs bark.\n(b / bark-01\n   :ARG0 (d / dog))\n",  # good, graph at line 5
    b"# ::snt Caf\xe9.\n(c / cafe)\n",  # latin-1 byte in the metadata: not UTF-8
    b"(x / one)\n(y / two)\n",  # a second graph without a blank line
    b"# ::snt Broken.\n(z / broken :ARG0 (w\n",  # unbalanced
    b"# ::snt Cats.\n(c / cat)",  # good, no final newline
]


@pytest.fixture
def amr_file(tmp_path):
    p = tmp_path / "g.amr"
    p.write_bytes(b"\n".join(BLOCKS))
    return p


def test_blocks_lines_and_errors(amr_file):
    got = [
        (b.line, b.graph_line, b.error.reason if b.error else None)
        for b in read_penman_blocks(amr_file)
    ]
    assert got == [
        (4, 5, None),
        (8, 9, "undecodable bytes (not UTF-8)"),
        (11, 11, "unexpected text after the graph: '(y / two)'"),
        (14, 15, "unbalanced parentheses: the graph is not closed"),
        (17, 18, None),
    ]
    assert [b.error.line for b in read_penman_blocks(amr_file) if b.error] == [8, 12, 15]


def test_read_amr_file_and_the_builder_use_the_same_rules(amr_file):
    stats = {}
    good = [(line, g.top) for line, g in read_amr_file(amr_file, on_error="skip", stats=stats)]
    assert good == [(5, "b"), (18, "c")] and stats == {"graphs": 2, "skipped": 3}
    with pytest.raises(AMRError, match=r"g\.amr:8: undecodable"):
        list(read_amr_file(amr_file))
    items = list(read_penman_items(amr_file))
    assert [(i.line, i.text) for i in items if not i.error] == [(4, "Dogs bark."), (17, "Cats.")]
    assert [i.line for i in items if i.error] == [8, 11, 14]  # every block is an item or a reject
