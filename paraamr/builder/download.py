"""`make models` (needs network): download the builder's real models into a models directory.

    python -m paraamr.builder.download --out models [--with-spring]

amrlib models come from the amrlib-models GitHub releases and are unpacked with amrlib's own
``amrlib.download`` (which links ``models/model_<name>`` to the versioned folder the configs point
to); GPT-2 and the models' tokenizers are fetched into the Hugging Face cache.
"""

from __future__ import annotations

import argparse

__all__ = ["AMRLIB_MODELS", "download_models"]

_REL = "https://github.com/bjascob/amrlib-models/releases/download/"
AMRLIB_MODELS = {
    "model_parse_xfm_bart_large": _REL + "parse_xfm_bart_large-v0_1_0/"
    "model_parse_xfm_bart_large-v0_1_0.tar.gz",
    "model_generate_t5wtense": _REL + "model_generate_t5wtense-v0_1_0/"
    "model_generate_t5wtense-v0_1_0.tar.gz",
    "model_parse_spring": _REL + "parse_spring-v0_1_0/model_parse_spring-v0_1_0.tar.gz",
}
HUB_MODELS = ("gpt2", "facebook/bart-large", "t5-base")  # LM + tokenizers the amrlib configs name


def download_models(out: str, with_spring: bool = False) -> None:
    import amrlib
    from huggingface_hub import snapshot_download

    for name, url in AMRLIB_MODELS.items():
        if name == "model_parse_spring" and not with_spring:
            continue
        print(f"{name} <- {url}")
        amrlib.download(name, url, mdata_dir=out)
    for repo in HUB_MODELS:
        print(f"hub cache <- {repo}")
        snapshot_download(repo, allow_patterns=["*.json", "*.txt", "*.model", "*.safetensors"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="models")
    ap.add_argument(
        "--with-spring",
        action="store_true",
        help="also the paper's SPRING parser (needs transformers < 5 to run)",
    )
    a = ap.parse_args(argv)
    download_models(a.out, a.with_spring)


if __name__ == "__main__":
    main()
