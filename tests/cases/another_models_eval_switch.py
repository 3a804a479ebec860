"""One model put in eval mode in a scope does not make the forwards of another model
GL004's: only a forward that is part of that evaluation (in the same statement, or the
same loop, as a forward of the eval'd model) is left to GL004, whose fix covers both.
Before, any eval switch that reached the call silenced GL012 there (a notebook is one
scope: one `model.eval()` in an early cell hid every later forward of another model)."""

import torch
import torch.nn as nn

classifier = nn.Linear(4, 2)
generator = nn.Linear(8, 4)
perceptual = nn.Linear(4, 1)
loader = [torch.randn(2, 4)]

classifier.eval()
for x in loader:
    logits = classifier(x)  # error: GL004
    score = perceptual(x)
    print(logits.argmax(1).tolist(), score.mean().item())

samples = generator(torch.randn(16, 8))  # error: GL012
print(samples.mean().item())
