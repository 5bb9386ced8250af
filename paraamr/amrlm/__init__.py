"""AMR models trained here: a text-to-AMR parser and an AMR-to-text generator, SmolLM2
fine-tuned on the gold graphs of the data folder through the one conditional-generation module.

- :mod:`~paraamr.amrlm.split`: the fixed train / dev / test split of the gold graphs;
- :mod:`~paraamr.amrlm.constraint`: parser decoding that can only write balanced graphs;
- :mod:`~paraamr.amrlm.module`: the module (one per direction);
- :mod:`~paraamr.amrlm.evaluate`: Smatch of the parser, BLEU and cosine of the generator;
- :mod:`~paraamr.amrlm.train`: training from ``conf/amr.yaml``.
"""

#: the file a trained AMR model folder holds beside its weights (its settings); light to import,
#: so that a command can check a model folder before torch loads
AMR_MODULE_FILE = "amr_module.json"
