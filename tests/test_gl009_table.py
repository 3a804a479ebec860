"""GL009's table of operations that save an inference operand for backward matches the
installed torch: each listed one raises "Inference tensors cannot be saved for backward"
when the other operand requires grad, and the look-alikes the rule leaves alone do not."""

from __future__ import annotations

import pytest

from gradlint.analysis.torch_api import (
    SAVING_FUNCTIONS,
    SAVING_METHODS,
    TARGET_SAVING_LOSS_MODULES,
    TARGET_SAVING_LOSSES,
    WEIGHTED_LAYERS,
)

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

INFERENCE_ERROR = "Inference tensors cannot be saved for backward"


def operands():
    torch.manual_seed(0)
    requiring = torch.rand(4, 3, requires_grad=True)
    with torch.inference_mode():
        inference = torch.rand(4, 3)
        labels = torch.randint(0, 3, (4,))
    return requiring, inference, labels


def raises_inference_error(fn) -> bool:
    try:
        fn()
    except RuntimeError as error:
        assert INFERENCE_ERROR in str(error), error
        return True
    return False


@pytest.mark.parametrize("method", sorted(SAVING_METHODS))
def test_saving_methods_and_functions_raise(method):
    requiring, inference, _ = operands()
    square = lambda t: t[:3]  # noqa: E731  (3x3, so mm/matmul shapes agree)
    a, b = square(requiring), square(inference)
    if method == "bmm":
        a, b = a[None], b[None]
    assert raises_inference_error(lambda: getattr(a, method)(b))
    assert raises_inference_error(lambda: getattr(b, method)(a))
    assert f"torch.{method}" in SAVING_FUNCTIONS
    assert raises_inference_error(lambda: getattr(torch, method)(a, b))


def test_saving_operators_raise():
    requiring, inference, _ = operands()
    assert raises_inference_error(lambda: requiring * inference)
    assert raises_inference_error(lambda: inference / requiring)
    assert raises_inference_error(lambda: requiring[:3] @ inference[:3])


def _loss_inputs(name, requiring, inference, labels):
    if name in ("nll_loss", "NLLLoss"):
        return requiring.log_softmax(-1), labels
    if name in ("binary_cross_entropy", "BCELoss"):
        return requiring.sigmoid(), inference
    if name in ("kl_div", "KLDivLoss"):
        return requiring.log_softmax(-1), inference
    return requiring, inference


@pytest.mark.filterwarnings("ignore:reduction")
@pytest.mark.parametrize("name", sorted(TARGET_SAVING_LOSSES))
def test_functional_losses_with_an_inference_target_raise(name):
    requiring, inference, labels = operands()
    loss_input, target = _loss_inputs(name, requiring, inference, labels)
    assert raises_inference_error(lambda: getattr(F, name)(loss_input, target))


@pytest.mark.filterwarnings("ignore:reduction")
@pytest.mark.parametrize("name", sorted(TARGET_SAVING_LOSS_MODULES))
def test_loss_modules_with_an_inference_target_raise(name):
    requiring, inference, labels = operands()
    loss_input, target = _loss_inputs(name, requiring, inference, labels)
    assert raises_inference_error(lambda: getattr(nn, name)()(loss_input, target))


def test_trainable_layers_raise_on_an_inference_input():
    with torch.inference_mode():
        x = torch.rand(2, 4)
        image = torch.rand(1, 4, 6, 6)
        indices = torch.randint(0, 4, (2,))
    examples = {
        "Linear": (nn.Linear(4, 4), x),
        "Conv2d": (nn.Conv2d(4, 4, 3), image),
        "Embedding": (nn.Embedding(4, 4), indices),
        "LayerNorm": (nn.LayerNorm(4), x),
        "BatchNorm1d": (nn.BatchNorm1d(4), x),
    }
    assert set(examples) <= WEIGHTED_LAYERS
    for layer, data in examples.values():
        assert raises_inference_error(lambda layer=layer, data=data: layer(data))


def test_the_look_alikes_left_alone_do_not_raise():
    requiring, inference, _ = operands()
    safe = [
        lambda: requiring + inference,
        lambda: requiring - inference,
        lambda: ((requiring - inference) ** 2).mean(),
        lambda: F.l1_loss(requiring, inference),
        lambda: F.cross_entropy(requiring, inference.softmax(-1)),
        lambda: F.cosine_similarity(requiring, inference),
        lambda: F.mse_loss(requiring, inference * 1.0),  # computed outside: a normal tensor
        lambda: F.mse_loss(requiring, inference.clone()),
    ]
    for fn in safe:
        assert not raises_inference_error(fn)
    for name in ("l1_loss", "cross_entropy", "cosine_similarity"):
        assert name not in TARGET_SAVING_LOSSES
