"""``paraamr amr parse --output``: graphs written chunk by chunk in input order, and a rerun
after a kill continues after the last whole block, writing what one run writes."""

from __future__ import annotations

import pytest

from paraamr.amr.serialize import serialize
from paraamr.amrlm.cli import parse_lines, parse_to_file, resume_point
from paraamr.errors import InputError

LINES = ["He left .", "", "The prince smiled .", "BAD", "I said nothing .", "Chapter 27 .",
         "The fox ran ."]  # fmt: skip


class FakeParser:
    """Answers every sentence with the serialized graph ``(x / <first word>)`` (``BAD``: no
    graph) and records what it was asked."""

    settings = {"direction": "parse", "max_source_length": 96}

    def __init__(self) -> None:
        self.seen: list[str] = []

    def units(self, prompt: str) -> list[str]:
        return prompt.split()

    def generate(self, batch: list[str]) -> list[str]:
        self.seen += batch
        return ["( ( (" if s == "BAD" else serialize(f"(x / {s.split()[0].lower()})")
                for s in batch]  # fmt: skip


def test_the_file_holds_one_block_per_line_in_input_order(tmp_path, capsys):
    out = tmp_path / "g.amr"
    res = parse_to_file(FakeParser(), LINES, out, batch_size=2, chunk_size=3)
    assert res == {"resumed": 0, "parsed": 7, "lines": 7}
    blocks = out.read_text().split("\n\n")
    assert blocks[-1] == "" and len(blocks) == 8  # every block ends with a blank line
    assert [b.splitlines()[0] for b in blocks[:-1]] == [f"# ::snt {s}".rstrip() for s in LINES]
    assert blocks[0].splitlines()[1] == "(h / he)"  # variables restored
    assert blocks[3].splitlines()[1] == "(e / amr-empty)"
    assert out.read_text() == "".join(b + "\n\n" for b in parse_lines(FakeParser(), LINES, 2))
    assert "2 of 7 lines got the placeholder graph (1 empty, 1 answers not a graph)" in (
        capsys.readouterr().err)  # fmt: skip


@pytest.mark.parametrize("cut", [0, 1, 17, 60, -1])
def test_a_killed_run_continues_after_its_last_whole_block(tmp_path, cut):
    whole = tmp_path / "whole.amr"
    parse_to_file(FakeParser(), LINES, whole, chunk_size=2)
    data = whole.read_bytes()
    killed = tmp_path / "killed.amr"
    killed.write_bytes(data[: cut if cut >= 0 else len(data) - 3])  # cut anywhere
    kept = data[: cut if cut >= 0 else len(data) - 3].decode().count("\n\n")
    again = FakeParser()
    res = parse_to_file(again, LINES, killed, chunk_size=2)
    assert killed.read_bytes() == data  # what one run writes
    assert res["resumed"] == kept and res["parsed"] == 7 - kept
    assert sorted(again.seen) == sorted(s for s in LINES[kept:] if s)  # only the missing ones
    done = FakeParser()
    assert parse_to_file(done, LINES, killed)["parsed"] == 0 and done.seen == []


def test_a_file_of_another_input_is_refused_not_appended_to(tmp_path):
    out = tmp_path / "g.amr"
    parse_to_file(FakeParser(), LINES, out)
    before = out.read_bytes()
    with pytest.raises(InputError, match=f"{out}: block 1 is not the graph of input line 1"):
        resume_point(out, ["Another sentence ."] + LINES[1:])
    with pytest.raises(InputError, match="block 7"):
        resume_point(out, LINES[:6])  # the input got shorter
    assert out.read_bytes() == before


class RepeatingParser(FakeParser):
    """Like :class:`FakeParser`, but ``The fox ran .`` gets a graph that states its one edge
    twice (as a looping parser writes it), and ``The prince smiled .`` one whose two edges
    differ only in direction (``s :ARG1-of t`` and ``t :ARG1 s``: one edge twice once the
    written graph is read)."""

    ANSWERS = {
        "The fox ran .": "( run-02 :ARG0 ( fox ) :ARG0 fox )",
        "The prince smiled .": "( silent :ARG1-of ( silent-01 ) :ARG1-of ( silent-01 ) )",
    }

    def generate(self, batch: list[str]) -> list[str]:
        return [self.ANSWERS.get(s, a)
                for s, a in zip(batch, super().generate(batch), strict=True)]  # fmt: skip


@pytest.mark.parametrize("to_file", [False, True])
def test_graphs_with_a_repeated_edge_are_counted_not_warned_about(tmp_path, monkeypatch, capsys,
                                                                 caplog, to_file):  # fmt: skip
    from paraamr.amrlm import cli

    monkeypatch.setattr(cli, "model_dir", lambda path, direction: tmp_path)
    monkeypatch.setattr(cli, "_load", lambda where, *settings: RepeatingParser())
    source = tmp_path / "s.txt"
    source.write_text("\n".join(LINES) + "\n")
    out = ["--output", str(tmp_path / "g.amr")] if to_file else []
    cli.run_amr(cli.argparse.Namespace(amr_cmd="parse", model="m", input=str(source),
                                       batch_size=4, on_error="skip", progress=False,
                                       num_beams=None, dtype=None, engine="hf", read_tokens=None,
                                       constraint=None,
                                       output=out[1] if out else None))  # fmt: skip
    err = capsys.readouterr().err
    assert "2 of 7 graphs state an edge twice" in err
    assert not [r for r in caplog.records if r.name.startswith("penman")]  # one per edge: quiet
    text = (tmp_path / "g.amr").read_text() if to_file else ""
    assert not to_file or text.count("# ::snt") == 7
    if to_file:  # the file's reader counts the same graphs
        from paraamr.amrlm.silver import read_silver

        assert read_silver(tmp_path / "g.amr").repeated == 2


def test_an_answer_read_with_an_edge_without_target_gets_the_placeholder(capsys, caplog):
    """A trained parser's answer (seed 1 of the better-parser recipe, for a ParaBank-Eval
    sentence) that amrlib reads as ``over`` with a role ``:`` and no target: written as the
    placeholder and counted as no graph, not as a graph the builder cannot lay out."""

    class Dangling(FakeParser):
        def generate(self, batch: list[str]) -> list[str]:
            answer = "( over: 100 :ARG1 ( cowboy :time ( day :mod ( year ) ) ) )"
            return [answer if s == "Chapter 27 ." else a
                    for s, a in zip(batch, super().generate(batch), strict=True)]  # fmt: skip

    blocks = parse_lines(Dangling(), LINES, 2)
    assert blocks[5] == "# ::snt Chapter 27 .\n(e / amr-empty)"
    assert blocks[6] == "# ::snt The fox ran .\n(t / the)"
    assert "3 of 7 lines got the placeholder graph (1 empty, 2 answers not a graph)" in (
        capsys.readouterr().err)  # fmt: skip
    assert not [r for r in caplog.records if r.name.startswith("penman")]


def test_a_rerun_under_other_decoding_settings_is_refused(tmp_path, capsys):
    """The graphs a file holds were parsed under the settings recorded beside it: a rerun
    that reads more tokens (or decodes otherwise) would mix two parsers in one file."""
    from paraamr.amrlm.cli import decoding_file

    out = tmp_path / "g.amr"
    first = {"read_tokens": 96, "num_beams": 1}
    parse_to_file(FakeParser(), LINES[:3], out, decoding=first)
    before = out.read_bytes()
    with pytest.raises(InputError, match=r"other decoding settings .*'read_tokens': \(96, 256\)"):
        parse_to_file(FakeParser(), LINES, out, decoding={"read_tokens": 256, "num_beams": 1})
    assert out.read_bytes() == before  # nothing appended
    res = parse_to_file(FakeParser(), LINES, out, decoding=first)  # the same settings continue
    assert res["resumed"] == 3 and res["parsed"] == 4
    # a file started without a record continues, saying so, and is recorded from then on
    decoding_file(out).unlink()
    parse_to_file(FakeParser(), LINES, out, decoding=first)
    assert "no record of their decoding settings" in capsys.readouterr().err
    assert decoding_file(out).is_file()
