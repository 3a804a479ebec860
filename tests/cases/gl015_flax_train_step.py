"""GL015's guess from the recurrent shape in a Flax training script that loads its data
with torch's DataLoader: `state, rng = p_train_step(state, batch, rng)` is a JAX step,
and the file's torch import is no evidence that it computes with torch weights."""

import jax
import jax.numpy as jnp
import torch


def main(epochs, dataset, state, rng):
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)

    def train_step(state, batch, rng):
        def loss_fn(params):
            return jnp.mean(state.apply_fn(params, batch) ** 2)

        grad = jax.grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grad), rng

    p_train_step = jax.pmap(train_step, "batch")
    for _ in range(epochs):
        for batch in loader:
            state, rng = p_train_step(state, batch, rng)
    return state
