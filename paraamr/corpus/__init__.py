"""Corpus format, streaming readers and the common-subset step."""

from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import FORMATS, guess_format, read_corpus, write_corpus
from paraamr.corpus.records import Paraphrase, SourceRecord, normalize_key, same_sentence
from paraamr.corpus.subset import common_keys, filter_common, key_of, source_keys

__all__ = [
    "FORMATS",
    "Paraphrase",
    "SkipLog",
    "SourceRecord",
    "common_keys",
    "filter_common",
    "guess_format",
    "key_of",
    "normalize_key",
    "read_corpus",
    "same_sentence",
    "source_keys",
    "write_corpus",
]
