"""int8 quantization with smoothing (:mod:`graphmatch.engine.inference.quantize`): the smoothed layer is the
same function, the ranges are each input channel's largest value, and smoothing takes back what an
outlier channel costs plain int8."""

import pytest
import torch
from torch import nn

from graphmatch.engine.inference.quantize import (
    SmoothedLinear,
    input_ranges,
    int8_engine,
    linear_names,
    quantize_linear,
    smoothing_scale,
    spread,
)


class Net(nn.Module):
    """Two linear layers and one that never runs (as BERT's pooler in a relation model)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up, self.down, self.unused = nn.Linear(64, 128), nn.Linear(128, 8), nn.Linear(8, 8)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def _inputs(n: int = 512, seed: int = 1) -> torch.Tensor:
    """Gaussian inputs whose channel 3 is 60 times larger than the rest (an outlier channel)."""
    x = torch.randn(n, 64, generator=torch.Generator().manual_seed(seed))
    x[:, 3] *= 60
    return x


def test_a_smoothed_layer_is_the_same_function():
    linear = nn.Linear(16, 5)
    scale = torch.rand(16) * 10 + 0.1
    x = torch.randn(7, 3, 16)
    assert torch.allclose(SmoothedLinear(linear, scale)(x), linear(x), atol=1e-5)
    assert torch.allclose(SmoothedLinear(linear, scale).linear.weight[:, 2], linear.weight[:, 2] * scale[2])


def test_input_ranges_are_the_largest_absolute_value_per_channel():
    net = Net()
    batches = [_inputs(32, seed) for seed in range(3)]
    ranges = input_ranges(net, batches)
    assert set(ranges) == {"up", "down"}  # the unused layer ran on no batch: no range
    assert torch.equal(ranges["up"], torch.cat(batches).abs().amax(0))
    hidden = torch.relu(net.up(torch.cat(batches)))
    assert torch.allclose(ranges["down"], hidden.abs().amax(0))
    assert not net.up._forward_pre_hooks  # the hooks are gone
    with pytest.raises(ValueError, match="no calibration batch"):
        input_ranges(net, [])


def test_smoothing_scale():
    ranges, weight = torch.tensor([4.0, 0.0, 1.0]), torch.tensor([[1.0, 2.0, -9.0], [-4.0, 1.0, 1.0]])
    scale = smoothing_scale(ranges, weight, alpha=0.5)
    assert torch.allclose(scale, torch.tensor([4.0 ** 0.5 / 4.0 ** 0.5, 1e-5 ** 0.5 / 2.0 ** 0.5, 1.0 / 3.0]))
    assert torch.equal(smoothing_scale(ranges, weight, alpha=0.0), 1 / weight.abs().amax(0))
    with pytest.raises(ValueError, match="alpha must be in"):
        smoothing_scale(ranges, weight, alpha=1.5)


def test_smoothing_takes_back_what_an_outlier_channel_costs_int8():
    net = Net().eval()
    calibration, x = _inputs(256, seed=2), _inputs(512, seed=3)
    ranges = input_ranges(net, [calibration])
    with torch.inference_mode():
        exact = net(x)
        plain = (quantize_linear(net)(x) - exact).abs().mean()
        smoothed_net = quantize_linear(net, ranges=ranges, alpha=0.8)
        smoothed = (smoothed_net(x) - exact).abs().mean()
    assert smoothed < 0.5 * plain, (float(smoothed), float(plain))
    modules = dict(smoothed_net.named_modules())
    assert type(modules["up"]) is SmoothedLinear and "quantized" in type(modules["up.linear"]).__module__
    assert "quantized" in type(modules["unused"]).__module__  # no range: quantized as it is
    assert type(net.up) is nn.Linear  # the model given is left alone


def test_kept_layers_are_neither_smoothed_nor_quantized():
    net = Net().eval()
    ranges = input_ranges(net, [_inputs(64)])
    modules = dict(quantize_linear(net, keep_fp32="^down$", ranges=ranges).named_modules())
    assert type(modules["down"]) is nn.Linear
    assert type(modules["up"]) is SmoothedLinear
    assert linear_names(net) == ["up", "down", "unused"]


def test_only_uneven_inputs_are_smoothed():
    """A layer is smoothed when its largest input range is at least ``min_spread`` times the median."""
    net = Net().eval()
    ranges = input_ranges(net, [_inputs(256)])
    assert spread(ranges["up"]) > 30 > 8 > spread(ranges["down"])  # the outlier channel; ReLU outputs
    assert spread(torch.tensor([1.0, 2.0, 8.0])) == 4.0
    default = dict(quantize_linear(net, ranges=ranges).named_modules())
    assert type(default["up"]) is SmoothedLinear and type(default["down"]) is not SmoothedLinear
    every = dict(quantize_linear(net, ranges=ranges, min_spread=0.0).named_modules())
    assert type(every["down"]) is SmoothedLinear


def test_weights_are_packed_for_the_chosen_engine_and_the_process_setting_is_kept(monkeypatch):
    """The packing runs under :func:`int8_engine` (oneDNN with AMX) or the engine given;
    the process's ``torch.backends.quantized.engine`` is what it was, after and on an error."""
    engines = torch.backends.quantized.supported_engines
    amx = torch.cpu._is_amx_tile_supported()
    assert int8_engine() == ("onednn" if "onednn" in engines and amx else torch.backends.quantized.engine)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert int8_engine() == torch.backends.quantized.engine  # no AMX: torch's own choice
    monkeypatch.undo()
    seen = []
    real = torch.ao.quantization.quantize_dynamic

    def spy(*args, **kwargs):
        seen.append(torch.backends.quantized.engine)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.ao.quantization, "quantize_dynamic", spy)
    net, before = Net().eval(), torch.backends.quantized.engine
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(4))  # no outlier channel
    with torch.inference_mode():
        exact = net(x)
        for engine in {None, "x86", "fbgemm", "onednn"} & {None, *engines}:
            out = quantize_linear(net, engine=engine)(x)
            assert seen[-1] == (engine or int8_engine()) and torch.backends.quantized.engine == before
            assert (out - exact).abs().mean() < 0.05 * exact.abs().mean()  # every engine's int8: close to fp32

    def fails(*args, **kwargs):
        raise RuntimeError("packing failed")

    monkeypatch.setattr(torch.ao.quantization, "quantize_dynamic", fails)
    with pytest.raises(RuntimeError, match="packing failed"):
        quantize_linear(net, engine="x86" if "x86" in engines else None)
    assert torch.backends.quantized.engine == before
