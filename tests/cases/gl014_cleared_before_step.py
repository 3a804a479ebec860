"""GL014's window of one: a clear between the backward and the step, one after the
other in one block, empties what the step applies. Not a clear of another optimizer or
of a model the stepped optimizer is not built from (a GAN's generator between the
critic's backward and step), nor a clear under a branch, nor one with a backward after
it, nor gradients handed back by hand before the step. Lint only: the markers are the
expected findings."""

import torch
from torch import nn

G, D = nn.Linear(2, 2), nn.Linear(2, 1)
g_opt = torch.optim.Adam(G.parameters())
d_opt = torch.optim.Adam(D.parameters())


def backwards_clear_step(loss):
    loss.backward()
    d_opt.zero_grad()  # error: GL014
    d_opt.step()


def model_clear_between(loss):
    loss.backward()
    D.zero_grad()  # error: GL014
    d_opt.step()


def one_line(loss):
    loss.backward(); d_opt.zero_grad(); d_opt.step()  # error: GL014


def gan_step(d_loss, g_loss):
    d_loss.backward()
    G.zero_grad()  # the generator's: the critic's step applies the critic's gradients
    g_opt.zero_grad()
    d_opt.step()
    g_loss.backward()
    g_opt.step()


def clear_under_a_branch(loss, skip):
    loss.backward()
    if skip:
        d_opt.zero_grad()
    d_opt.step()


def backward_after_the_clear(loss, penalty):
    loss.backward(retain_graph=True)
    d_opt.zero_grad()
    penalty.backward()
    d_opt.step()


def gradients_restored_by_hand(loss):
    loss.backward()
    saved = [p.grad.clone() for p in D.parameters()]
    d_opt.zero_grad()
    for p, g in zip(D.parameters(), saved):
        p.grad = g
    d_opt.step()
