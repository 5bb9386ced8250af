"""Few-shot classification with paraphrase augmentation (the ParaAMR paper's §5.3, Table 7).

- :mod:`paraamr.fewshot.data`: GLUE MRPC / QQP / RTE readers (shared files or the hub), seeded
  k-shot samples, the seeded 1/3 internal dev / 2/3 test split of the GLUE dev set, and the
  check that no few-shot example is a test example.
- :mod:`paraamr.fewshot.augment`: the :class:`~paraamr.fewshot.augment.Paraphraser` interface,
  the adapter to the syntax-controlled paraphraser of :mod:`paraamr.scpn`, label-keeping
  augmentation with counted drops, and the "repeat" baseline.
- :mod:`paraamr.fewshot.module`: a Lightning sequence(-pair) classifier over any Hugging Face
  encoder and its data module.
- :mod:`paraamr.fewshot.job`: one Table 7 job (task, k, augmentation, seed) from a Hydra config.
"""
