"""The ParaAMR paper's published numbers (Huang et al., ACL 2023), one constant per table.

Tables print these beside our rows; nothing here is computed.

>>> PAPER_TABLE2["ParaAMR"]["ted3"], PAPER_TABLE5["ParaAMR"]
(5.86, (77.7, 75.72))
"""

from __future__ import annotations

__all__ = [
    "PAPER_TABLE1",
    "PAPER_TABLE2",
    "PAPER_TABLE2_SOURCES",
    "PAPER_TABLE4",
    "PAPER_TABLE5",
    "PAPER_TOP_TABLE2",
    "PAPER_TOP_TABLE3",
    "PAPER_TOP_TABLE4",
    "PAPER_TABLE6",
    "PAPER_TABLE7",
]

# Table 1: (#instances, avg #paraphrases per source, avg length in words)
PAPER_TABLE1 = {
    "ParaNMT": (51_409_584, 1.00, 11.90),
    "ParaBank1": (57_065_358, 4.31, 12.16),
    "ParaBank2": (19_723_003, 4.75, 15.51),
    "ParaAMR": (15_543_606, 6.91, 15.20),
}

# Table 2: similarity / 1-BLEU / 1-IoU in percent, TED in edit operations, 193,869 common sources
PAPER_TABLE2_SOURCES = 193_869
PAPER_TABLE2 = {
    "ParaNMT": {
        "similarity": 84.28,
        "one_minus_bleu": 70.71,
        "one_minus_iou": 45.78,
        "ted3": 3.28,
        "tedf": 13.94,
    },
    "ParaBank1": {
        "similarity": 81.77,
        "one_minus_bleu": 78.19,
        "one_minus_iou": 52.59,
        "ted3": 3.59,
        "tedf": 14.53,
    },
    "ParaBank2": {
        "similarity": 82.50,
        "one_minus_bleu": 88.82,
        "one_minus_iou": 59.61,
        "ted3": 4.04,
        "tedf": 17.41,
    },
    "ParaAMR": {
        "similarity": 82.05,
        "one_minus_bleu": 87.86,
        "one_minus_iou": 53.10,
        "ted3": 5.86,
        "tedf": 22.07,
    },
}

# Table 4: human evaluation (300 pairs per corpus on shared sources, 3 MTurk workers each):
# question -> corpus -> (share of 3, share of 2, share of 1 in percent, average score)
PAPER_TABLE4 = {
    "similarity": {
        "ParaNMT": (28.7, 46.7, 24.6, 2.04),
        "ParaBank1": (26.8, 49.0, 24.2, 2.03),
        "ParaBank2": (26.8, 50.3, 22.9, 2.04),
        "ParaAMR": (26.5, 47.2, 26.3, 2.00),
    },
    "diversity": {
        "ParaNMT": (16.7, 45.0, 38.3, 1.78),
        "ParaBank1": (15.1, 47.8, 37.1, 1.78),
        "ParaBank2": (14.2, 51.8, 34.0, 1.80),
        "ParaAMR": (18.2, 53.8, 28.0, 1.90),
    },
}

# ParaAMR paper, Table 5: average STS12-16 Pearson / Spearman (bert-base-uncased, 5 seeds)
PAPER_TABLE5 = {
    "ParaNMT": (74.38, 73.80),
    "ParaBank1": (74.80, 74.56),
    "ParaBank2": (75.39, 75.17),
    "ParaAMR": (77.70, 75.72),
}

# Tran & Tan, "Generating Synthetic Data for Task-Oriented Semantic Parsing with Hierarchical
# Representations" (the TOP method), exact match in percent on the TOP test set.
# Table 2: (data, AP filter, target parser, #samples and accuracy without UNSUPPORTED,
# #samples and accuracy with UNSUPPORTED)
PAPER_TOP_TABLE2 = (
    ("Real", None, "BART", 28_414, 83.37, 31_279, 81.01),
    ("+syn", "BART", "BART", 53_679, 84.26, 56_547, 81.74),
    ("Real", None, "s2s-pointer", 28_414, 84.80, 31_279, 82.10),
    ("+syn", "BART", "s2s-pointer", 53_679, 85.31, 56_355, 82.71),
    ("+syn", "s2s-pointer", "s2s-pointer", 89_629, 85.68, 92_264, 82.77),
)
# Table 3: BART parser by template frequency in training (f >= 5, f < 5, f = 0)
PAPER_TOP_TABLE3 = {"Real": (89.46, 74.70, 61.90), "+syn": (90.30, 76.06, 62.57)}
# Table 4: low-resource (one utterance per template), 5 subsamples: (#samples, mean, ±)
PAPER_TOP_TABLE4 = {"Real": (6_000, 72.24, 0.05), "+syn": (30_000, 74.31, 0.05)}
# ParaAMR paper, Table 6: SCPN (bart-base) BLEU on the Quora / MRPC / PAN test sets of SynPG
PAPER_TABLE6 = {
    "ParaNMT": (47.38, 45.24, 39.45),
    "ParaBank1": (46.21, 44.52, 39.85),
    "ParaBank2": (46.86, 45.17, 40.20),
    "ParaAMR": (48.50, 47.38, 40.30),
}
# ParaAMR paper, Table 7: few-shot test accuracy (bert-base-uncased; the paper reports accuracy
# only, no seeds or std). k -> row -> (MRPC, QQP, RTE); "baseline" = no augmentation, the others
# = three SCPN paraphrases per example from a generator trained on that corpus.
PAPER_TABLE7 = {
    15: {
        "baseline": (59.93, 63.18, 54.05),
        "ParaNMT": (49.26, 63.54, 55.68),
        "ParaBank1": (59.56, 63.72, 54.59),
        "ParaBank2": (58.46, 63.54, 54.05),
        "ParaAMR": (62.87, 64.08, 52.97),
    },
    30: {
        "baseline": (68.38, 64.93, 54.51),
        "ParaNMT": (67.65, 66.20, 52.71),
        "ParaBank1": (64.46, 64.86, 53.79),
        "ParaBank2": (68.38, 64.91, 54.15),
        "ParaAMR": (69.36, 67.03, 55.60),
    },
}
