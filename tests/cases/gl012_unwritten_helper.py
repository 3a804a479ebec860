"""GL012 and a helper whose body is not written yet: a stub, or a course exercise whose
`<YOUR CODE HERE>` the notebook reader masks as `...` (yandexdataschool/nlp_course's
seq2seq template). What it will do with the value handed to it cannot be read, so the
forward's result is not known to be unused. The same helper written out, reading only
a number of it, is still followed."""

import torch
from torch import nn

model = nn.Linear(4, 4)


def decode_step(state, token):
    prev = state[0]  # noqa: F841 (the exercise goes on from here)
    ...
    return new_state, logits  # noqa: F821 (names the exercise defines)


def decode_step_written(state, token):
    return float(state.sum()), token


def debug(x):
    h = model(x)
    return decode_step(h, 0)


def debug_written(x):
    h = model(x)  # error: GL012
    return decode_step_written(h, 0)
