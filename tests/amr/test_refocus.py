"""Tests of paraamr.amr.refocus: re-focusing, focus candidates, linearization, file reading."""

from __future__ import annotations

import logging
import time
from collections import Counter
from pathlib import Path

import penman
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from penman.models.amr import model as amr_model

from paraamr.amr import AMRError, candidate_foci, linearize, read_amr_file, refocus
from paraamr.errors import ParaAMRError

GOLD_FILES = {
    "amr-bank-struct-v3.0.txt": 1562,  # The Little Prince
    "amr-release-dev-bio.txt": 500,  # Bio AMR dev
}


def decode(s: str) -> penman.Graph:
    return penman.decode(s, model=amr_model)


def refs_to(s: str, var: str) -> list[tuple[str, str]]:
    """(node, role) of every branch written as a bare reference to *var* outside *var*'s node."""
    tree = penman.parse(s)
    return [
        (node, role)
        for node, branches in tree.nodes()
        for role, target in branches
        if role != "/" and target == var and node != var
    ]


def check_refocused(g: penman.Graph, focus: str) -> str:
    """Assert the refocus invariants of *g* for *focus*; return the linearization."""
    r = refocus(g, focus)
    assert set(r.triples) == set(g.triples)
    assert len(r.triples) == len(set(g.triples))
    assert r.top == focus
    # plain penman.encode must follow the rebuilt layout (linearize would repair a bad one)
    s = penman.encode(penman.Graph(r.triples, r.top, r.epidata), indent=None, model=amr_model)
    assert "\n" not in s and "  " not in s
    back = decode(s)
    assert back.top == focus
    assert set(back.triples) == set(g.triples)
    assert refs_to(s, focus) == []  # every edge pointing to the focus is written inverted
    return s


# (a) literal fixtures ########################################################

WANT = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
BOA = "(b / boa :mod (c / constrictor) :ARG0-of (s / swallow-01 :ARG1 (a / animal)))"
# lpp_1943.5 (flattened): penman.encode(g, top='c') defines c2 twice
LPP5 = (
    "(s2 / say-01 :ARG0 (b2 / book) :ARG1 (s / swallow-01 :ARG0 (b / boa :mod (c / constrictor))"
    " :ARG1 (p / prey :mod (w / whole) :poss b)"
    " :manner (c2 / chew-01 :polarity - :ARG0 b :ARG1 p)))"
)

FIXTURES = [
    (WANT, "w", WANT),
    (WANT, "b", "(b / boy :ARG0-of (w / want-01 :ARG1 (g / go-02)) :ARG0-of g)"),
    (WANT, "g", "(g / go-02 :ARG1-of (w / want-01 :ARG0 (b / boy)) :ARG0 b)"),
    (BOA, "s", "(s / swallow-01 :ARG0 (b / boa :mod (c / constrictor)) :ARG1 (a / animal))"),
    (BOA, "c", "(c / constrictor :mod-of (b / boa :ARG0-of (s / swallow-01 :ARG1 (a / animal))))"),
    (BOA, "a", "(a / animal :ARG1-of (s / swallow-01 :ARG0 (b / boa :mod (c / constrictor))))"),
    # :domain is a role of its own in the AMR model: it inverts to :domain-of, not :mod
    ("(p / picture :domain (i / it))", "i", "(i / it :domain-of (p / picture))"),
    # :consist-of is a non-inverted AMR role, so its inverse is :consist-of-of
    ("(t / team :consist-of (p / person))", "p", "(p / person :consist-of-of (t / team))"),
    # attributes stay with their node; a self-loop stays in its node
    (
        "(a / x :polarity - :ARG0 a :ARG1 (b / y :quant 3))",
        "b",
        "(b / y :ARG1-of (a / x :polarity - :ARG0 a) :quant 3)",
    ),
    (
        LPP5,
        "c",
        "(c / constrictor :mod-of (b / boa :ARG0-of (s / swallow-01 :ARG1-of (s2 / say-01"
        " :ARG0 (b2 / book)) :ARG1 (p / prey :mod (w / whole) :poss b) :manner (c2 / chew-01"
        " :polarity - :ARG0 b :ARG1 p))))",
    ),
    (
        LPP5,
        "b",
        "(b / boa :ARG0-of (s / swallow-01 :ARG1-of (s2 / say-01 :ARG0 (b2 / book))"
        " :ARG1 (p / prey :mod (w / whole)) :manner (c2 / chew-01 :polarity - :ARG1 p))"
        " :mod (c / constrictor) :poss-of p :ARG0-of c2)",
    ),
]


@pytest.mark.parametrize(("amr", "focus", "expected"), FIXTURES)
def test_refocus_fixtures(amr, focus, expected):
    g = decode(amr)
    assert linearize(refocus(g, focus)) == expected
    assert linearize(refocus(amr, focus)) == expected  # strings are decoded with the AMR model
    check_refocused(g, focus)


def test_naive_penman_encode_breaks_where_refocus_does_not():
    g = decode(LPP5)
    naive = decode(penman.encode(g, top="c", model=amr_model))
    assert set(naive.triples) != set(g.triples)  # stale layout markers: c2 defined twice
    check_refocused(g, "c")


def test_refocus_keeps_metadata_and_alignments_and_input():
    g = decode("# ::snt The boy wants to go .\n(w / want-01~e.2 :ARG0~e.1 (b / boy~e.1))")
    before = (list(g.triples), {t: list(e) for t, e in g.epidata.items()}, g.top)
    r = refocus(g, "b")
    assert r.metadata == {"snt": "The boy wants to go ."}
    assert linearize(r) == "(b / boy~e.1 :ARG0-of~e.1 (w / want-01~e.2))"
    assert penman.encode(r, model=amr_model).startswith("# ::snt The boy wants to go .\n(b / boy")
    assert (list(g.triples), {t: list(e) for t, e in g.epidata.items()}, g.top) == before


def test_refocus_bare_triples_without_layout():
    g = penman.Graph(
        [
            ("g", ":ARG0", "b"),
            ("w", ":instance", "want-01"),
            ("w", ":ARG1", "g"),
            ("b", ":instance", "boy"),
            ("w", ":ARG0", "b"),
            ("g", ":instance", "go-02"),
        ],
        top="w",
    )
    for v in ("w", "b", "g"):
        check_refocused(g, v)


def test_refocus_duplicate_triples_kept_once(caplog):
    g = penman.Graph([("a", ":instance", "x"), ("a", ":polarity", "-"), ("a", ":polarity", "-")])
    with caplog.at_level(logging.DEBUG):
        r = refocus(g, "a")
    assert r.triples == [("a", ":instance", "x"), ("a", ":polarity", "-")]
    assert "duplicate triple" in caplog.text
    assert not [x for x in caplog.records if x.levelno >= logging.WARNING]  # no line per focus


def test_refocus_errors():
    g = decode(WANT)
    with pytest.raises(AMRError, match="focus 'x' is not a variable"):
        refocus(g, "x")
    with pytest.raises(AMRError, match="not a variable"):
        refocus(g, "want-01")  # a concept, not a variable
    disconnected = penman.Graph(
        [
            ("a", ":instance", "x"),
            ("a", ":ARG0", "c"),
            ("c", ":instance", "z"),
            ("b", ":instance", "y"),
        ]
    )
    with pytest.raises(AMRError, match="not connected to it: b") as info:
        refocus(disconnected, "a")
    assert isinstance(info.value, ParaAMRError)
    with pytest.raises(AMRError, match="cannot decode"):
        refocus("(w / want-01 :ARG0 (b / boy)", "b")


def test_linearize_strips_metadata_and_indents():
    g = decode("# ::snt Dogs bark .\n(b / bark-01\n   :ARG0 (d / dog))")
    assert linearize(g) == "(b / bark-01 :ARG0 (d / dog))"
    assert linearize(g, indent=-1) == "(b / bark-01\n   :ARG0 (d / dog))"
    assert linearize(g, indent=6) == "(b / bark-01\n      :ARG0 (d / dog))"
    assert g.metadata == {"snt": "Dogs bark ."}


def test_linearize_rebuilds_a_stale_layout():
    g = decode(LPP5)
    g.top = "c"  # markers still describe the tree from s2
    s = linearize(g)
    assert s == linearize(refocus(decode(LPP5), "c"))
    back = decode(s)
    assert back.top == "c" and set(back.triples) == set(g.triples)


def test_candidate_foci_policies():
    assert candidate_foci(WANT) == ["b", "g"]
    assert candidate_foci(WANT, "no_incoming") == []
    assert candidate_foci(BOA) == ["c", "s", "a"]
    assert candidate_foci(BOA, "no_incoming") == ["s"]  # b's top has an incoming :ARG0 from s
    # predicates: a frame (go-02) or a node with a child (city :name n); not boy, not the name
    paris = (
        "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b"
        ' :ARG4 (c / city :name (n / name :op1 "Paris"))))'
    )
    assert candidate_foci(paris, "predicates") == ["g", "c"]
    assert candidate_foci(paris, "no_incoming") == []
    # an inverted edge makes its target the head: (b :ARG0-of s) is s's edge, s a frame anyway;
    # (p :poss-of x) is x's edge to p, so x heads it
    assert candidate_foci("(p / prey :poss-of (x / boa) :mod (w / whole))", "predicates") == ["x"]
    assert candidate_foci(BOA, "predicates") == ["s"]
    assert candidate_foci(LPP5, "random_k", k=3, seed=7) == candidate_foci(
        LPP5, "random_k", k=3, seed=7
    )
    assert candidate_foci(LPP5, "random_k", k=100) == candidate_foci(LPP5)
    assert candidate_foci(LPP5, "random_k", k=0) == []
    with pytest.raises(ValueError, match="unknown policy"):
        candidate_foci(WANT, "leaves")
    with pytest.raises(ValueError, match="needs an integer k"):
        candidate_foci(WANT, "random_k")
    with pytest.raises(ValueError, match="needs an integer k"):
        candidate_foci(WANT, "random_k", k=-1)
    with pytest.raises(ValueError, match="only applies"):
        candidate_foci(WANT, "all", k=2)


# (b) gold graphs #############################################################


@pytest.fixture(scope="module")
def gold_graphs(data_dir) -> list[tuple[str, int, penman.Graph]]:
    graphs = []
    for name, expected in GOLD_FILES.items():
        path = data_dir / "amr" / name
        if not path.is_file():
            pytest.skip(f"gold AMR file not found: {path}")
        stats: dict[str, int] = {}
        these = [(name, line, g) for line, g in read_amr_file(path, stats=stats)]
        assert stats == {"graphs": expected, "skipped": 0}
        graphs.extend(these)
    return graphs


def test_gold_graphs_every_focus(gold_graphs):
    """Every variable of every gold graph (policy "all") can be the focus.

    Gold graphs are decoded from single PENMAN trees, hence connected, so
    no focus may fail (AMRError is only for foci that cannot reach the whole
    graph). Exhaustive: 2,062 graphs, 19,874 foci, ~15 s.
    """
    start = time.perf_counter()
    counts: Counter[str] = Counter()
    failures: list[tuple[str, str | None, str, str]] = []
    for name, _line, g in gold_graphs:
        counts["graphs"] += 1
        counts["no_incoming"] += len(candidate_foci(g, "no_incoming"))
        for focus in candidate_foci(g, "all"):
            counts["foci"] += 1
            try:
                check_refocused(g, focus)
            except AMRError as exc:
                failures.append((name, g.metadata.get("id"), focus, str(exc)))
    elapsed = time.perf_counter() - start
    print(f"\ngold refocus: {dict(counts)}, failures={len(failures)}, {elapsed:.1f}s")
    assert counts["graphs"] == sum(GOLD_FILES.values())
    assert counts["foci"] > 5 * counts["graphs"]
    assert failures == []


def test_gold_graphs_identity_refocus(gold_graphs):
    """Re-focusing on the current top changes nothing but incoming edges of the top."""
    for _name, _line, g in gold_graphs:
        s = linearize(refocus(g, g.top))
        if not any(t == g.top for _, role, t in g.triples if role != ":instance"):
            assert s == linearize(g)
        assert decode(s).top == g.top


# (c) properties on random AMR-like graphs ####################################

ROLES = [":ARG0", ":ARG1", ":ARG2", ":ARG3", ":mod", ":location"]
CONCEPTS = ["dog", "want-01", "go-02", "i", "thing", "and", "person", "see-01"]


@st.composite
def amr_graphs(draw) -> penman.Graph:
    """A random connected graph: a random tree (edges in either direction) plus re-entrancies."""
    n = draw(st.integers(min_value=1, max_value=12))
    names = [f"{chr(ord('a') + i % 26)}{i}" for i in range(n)]
    triples = [(v, ":instance", draw(st.sampled_from(CONCEPTS))) for v in names]
    for i in range(1, n):
        parent = names[draw(st.integers(min_value=0, max_value=i - 1))]
        role = draw(st.sampled_from(ROLES))
        edge = (names[i], role, parent) if draw(st.booleans()) else (parent, role, names[i])
        triples.append(edge)
    if n > 1:
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            src, tgt = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
            triples.append((src, draw(st.sampled_from(ROLES)), tgt))
    for v in names:
        if draw(st.booleans()):
            triples.append((v, ":polarity", "-"))
    triples = list(dict.fromkeys(draw(st.permutations(triples))))
    return penman.Graph(triples, top=names[0])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=amr_graphs(), data=st.data())
def test_property_refocus(g, data):
    focus = data.draw(st.sampled_from(sorted(g.variables())))
    check_refocused(g, focus)  # bare triples, no layout markers
    decoded = decode(linearize(g))  # the same graph with the layout markers of a decoded tree
    assert set(decoded.triples) == set(g.triples)
    check_refocused(decoded, focus)
    twice = refocus(refocus(decoded, focus), g.top)
    assert set(twice.triples) == set(g.triples) and twice.top == g.top


@settings(max_examples=150, deadline=None)
@given(
    g=amr_graphs(),
    k=st.integers(min_value=0, max_value=15),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_property_candidate_foci(g, k, seed):
    everything = candidate_foci(g, "all")
    assert set(everything) == g.variables() - {g.top}
    assert len(everything) == len(set(everything))
    assert everything == [t[0] for t in g.triples if t[1] == ":instance" and t[0] != g.top]

    roots = candidate_foci(g, "no_incoming")
    targets = {t for _, role, t in g.triples if role != ":instance"}
    assert roots == [v for v in everything if v not in targets]

    drawn = candidate_foci(g, "random_k", k=k, seed=seed)
    assert drawn == candidate_foci(g, "random_k", k=k, seed=seed)
    assert len(drawn) == min(k, len(everything))
    assert drawn == [v for v in everything if v in set(drawn)]  # a subsequence, graph order


# (d) reading files ###########################################################

GOOD = "# ::id 1\n# ::snt Dogs bark .\n(b / bark-01\n   :ARG0 (d / dog))\n"
GOOD2 = "# ::id 3\n# ::snt Cats sleep .\n(s / sleep-01 :ARG0 (c / cat))\n"


def write(tmp_path: Path, *blocks: str, sep: str = "\n") -> Path:
    path = tmp_path / "amrs.txt"
    path.write_text("# AMR release header\n" + sep + sep.join(blocks))
    return path


@pytest.mark.parametrize(
    ("bad", "bad_line", "match"),
    [
        ("# ::id 2\n(w / want-01\n   :ARG0 (b / boy)\n", 9, "unbalanced parentheses"),
        ("# ::id 2\n(w / want-01\n   :ARG0 (b / boy)\n   :ARG1 / go)\n", 11, "cannot decode"),
        ("# ::id 2\n(w / want-01 :ARG0 (b / boy)))\n", 9, "unexpected text after the graph"),
        ("# ::id 2\n(w / want-01)\n(b / boy)\n", 10, "unexpected text after the graph"),
        ("# ::id 2\n()\n", 9, "empty AMR graph"),
    ],
)
def test_read_amr_file_errors_name_file_and_line(tmp_path, caplog, bad, bad_line, match):
    path = write(tmp_path, GOOD, bad, GOOD2)
    with pytest.raises(AMRError, match=match) as info:
        list(read_amr_file(path))
    assert info.value.path == str(path)
    assert info.value.line == bad_line
    assert str(info.value).startswith(f"{path}:{bad_line}: ")
    assert isinstance(info.value, ParaAMRError)

    stats: dict[str, int] = {}
    with caplog.at_level(logging.WARNING, logger="paraamr.amr.refocus"):
        got = [(line, g.metadata["id"]) for line, g in read_amr_file(path, "skip", stats)]
    assert got == [(5, "1"), (line_of_third(bad), "3")]
    assert stats == {"graphs": 2, "skipped": 1}
    assert f"{path}:{bad_line}:" in caplog.text


def line_of_third(bad: str) -> int:
    # header (1) + blank (2) + GOOD (3-6) + blank (7) + bad + blank + 2 metadata lines
    return 7 + bad.count("\n") + 1 + 3


def test_read_amr_file_crlf_and_whitespace_lines(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes((GOOD + "   \n" + GOOD2).replace("\n", "\r\n").encode())
    graphs = list(read_amr_file(path))
    assert [line for line, _ in graphs] == [3, 8]
    assert graphs[1][1].metadata == {"id": "3", "snt": "Cats sleep ."}
    assert linearize(graphs[0][1]) == "(b / bark-01 :ARG0 (d / dog))"


def test_read_amr_file_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="on_error"):
        list(read_amr_file(write(tmp_path, GOOD), on_error="ignore"))
    with pytest.raises(OSError):
        list(read_amr_file(tmp_path / "missing.txt"))
