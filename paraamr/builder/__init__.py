"""The ParaAMR corpus builder (AMR back-translation), usable stage by stage."""

from paraamr.builder.pipeline import BuildConfig, Builder, BuildError, build_shard, merge_build
from paraamr.builder.postprocess import postprocess
from paraamr.builder.stats import table1_stats
from paraamr.corpus.filters import filter_by_perplexity

__all__ = [
    "BuildConfig",
    "BuildError",
    "Builder",
    "filter_by_perplexity",
    "merge_build",
    "postprocess",
    "build_shard",
    "table1_stats",
]
