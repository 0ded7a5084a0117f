"""K-BERT classifiers and taggers fine-tuned and saved by the official code (UER names) load into
KBert's ``uer`` head strictly and give the official logits."""

import pytest
import torch
from uer_checkpoints import uer_classifier_logits, uer_folder, uer_hidden, uer_inputs, uer_state

from graphmatch.models.kbert import KBert
from graphmatch.nn import HFBertEncoder, MaskTransformerConfig, MaskTransformerEncoder
from graphmatch.pretrained import resolve_pretrained


def _model(folder, num_labels=3, **kw) -> KBert:
    encoder = MaskTransformerEncoder(MaskTransformerConfig.from_pretrained(folder))
    return KBert(encoder, num_labels, **kw).eval()


def _ours_inputs():
    src, seg, pos, vm = uer_inputs(seed=3)
    return src, seg, pos, vm, (seg - 1).clamp(min=0), seg > 0


@pytest.mark.parametrize("prefix", ["", "module."])
def test_classifier_gives_the_official_logits(tmp_path, capsys, prefix):
    state = uer_state(head="classifier", target=False, seed=1)
    folder = uer_folder(tmp_path / "outputs", {prefix + k: v for k, v in state.items()}, weights="classifier.bin")
    model = _model(folder)
    report = model.load_uer(folder / "classifier.bin")
    assert report.loaded == len(model.state_dict()) - 2  # all but the pooler, which the uer head does not use
    assert report.fresh == {"target.nsp_linear_1.*": ["target.nsp_linear_1.weight", "target.nsp_linear_1.bias"]}
    assert "pretrained: target.nsp_linear_1.* (2 tensors) not in the checkpoint" in capsys.readouterr().err
    assert torch.equal(model.output_layer.weight, state["output_layer_1.weight"])
    assert torch.equal(model.classifier.bias, state["output_layer_2.bias"])
    src, seg, pos, vm, ours_seg, real = _ours_inputs()
    with torch.no_grad():
        got = model.forward_dense(src, pos, ours_seg, real, vm)
    want = uer_classifier_logits(state, uer_hidden(state, src, seg, pos, vm))
    assert torch.allclose(got, want, atol=1e-5)


def test_tagger_gives_the_official_logits(tmp_path):
    state = uer_state(head="tagger", labels=5, target=True, seed=2)  # run_kbert_ner.py keeps target.*
    folder = uer_folder(tmp_path / "outputs", state, weights="tagger.bin")
    model = _model(folder, num_labels=5, tagging=True)
    report = model.load_uer(resolve_pretrained(folder / "tagger.bin").read_weights(), log=False)
    assert set(report.ignored) == {"target.*"} and not report.fresh
    src, seg, pos, vm, _, real = _ours_inputs()
    ner_seg = torch.ones_like(seg)  # the NER script's segment: 1 everywhere
    with torch.no_grad():
        got = model.forward_dense(src, pos, torch.zeros_like(seg), real, vm)
    hidden = uer_hidden(state, src, ner_seg, pos, vm)
    want = hidden[real] @ state["output_layer.weight"].T + state["output_layer.bias"]
    assert torch.allclose(got, want, atol=1e-5)


def test_mismatches_are_one_line_errors(tmp_path):
    state = uer_state(head="classifier", target=False)
    folder = uer_folder(tmp_path / "outputs", state, weights="classifier.bin")
    file = folder / "classifier.bin"
    with pytest.raises(ValueError, match=r"mis-shaped 2 weights: output_layer_2\.weight \[3, 16\] vs \[2, 16\]"):
        _model(folder, num_labels=2).load_uer(file)
    with pytest.raises(ValueError, match=r"missing 2 weights: output_layer_1\.weight, output_layer_1\.bias$"):
        _model(folder).load_uer(uer_folder(tmp_path / "nohead", {k: v for k, v in state.items()
                                                                 if not k.startswith("output_layer_1")}))
    with pytest.raises(ValueError, match=r"unexpected 4 weights: output_layer_1\.weight"):  # another head
        _model(folder, head="bert_pooler").load_uer(file)
    config = MaskTransformerConfig.from_pretrained(folder, layer_norm="bert")
    with pytest.raises(ValueError, match="load into the mask-transformer encoder"):
        KBert(HFBertEncoder.from_config(config), 3).load_uer(file)
