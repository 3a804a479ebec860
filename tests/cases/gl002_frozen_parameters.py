"""GL002 traps and one positive: an in-place update of a model's parameters after every
one of them was switched off, in a loop over the model's parameters or by a helper that
does it (GAN_stability's `update_average` after `toggle_grad(model_tgt, False)`), raises
nothing; switched back on, or never switched, it raises."""

import torch


def toggle_grad(model, requires_grad):
    for p in model.parameters():
        p.requires_grad_(requires_grad)


def update_average(model_tgt, model_src, beta):
    toggle_grad(model_src, False)
    toggle_grad(model_tgt, False)
    param_dict_src = dict(model_src.named_parameters())
    for p_name, p_tgt in model_tgt.named_parameters():
        p_src = param_dict_src[p_name]
        p_tgt.copy_(beta * p_tgt + (1.0 - beta) * p_src)


def update_average_frozen_inline(model_tgt, model_src, beta):
    for p in model_tgt.parameters():
        p.requires_grad = False
    for p_tgt, p_src in zip(model_tgt.parameters(), model_src.parameters()):
        p_tgt.mul_(beta)


def update_average_frozen_by_keyword(model_tgt, model_src, beta):
    toggle_grad(model=model_tgt, requires_grad=False)
    for p_tgt in model_tgt.parameters():
        p_tgt.mul_(beta)


def update_average_switched_back_on(model_tgt, beta):
    toggle_grad(model_tgt, False)
    toggle_grad(model_tgt, True)
    for p_tgt in model_tgt.parameters():
        p_tgt.mul_(beta)  # error: GL002


def update_average_of_another_model(model_tgt, model_src, beta):
    toggle_grad(model_src, False)
    for p_tgt in model_tgt.parameters():
        p_tgt.mul_(beta)  # error: GL002
