"""Real pitfalls from the real-code ledger (bench/real-code/ledger.tsv), reduced to their
shape: each flagged line carries its expected code."""
import torch
import torch.nn.functional as F


# learn2learn protonet_miniimagenet.py: eval() in the caller, the forward inside a helper
# that training also uses; the name `loss` is reused for the training loss.
def fast_adapt(model, batch):
    data, labels = batch
    embeddings = model(data)
    loss = F.cross_entropy(embeddings, labels)
    acc = (embeddings.argmax(1) == labels).float().mean()
    return loss, acc


def protonet(model, train_loader, valid_loader, opt, epochs):
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            loss, acc = fast_adapt(model, batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        total = 0.0
        for batch in valid_loader:
            loss, acc = fast_adapt(model, batch)  # error: GL004
            total += loss.item()
    # still in eval mode from the last epoch's validation pass
    for batch in valid_loader:
        loss, acc = fast_adapt(model, batch)  # error: GL004
        total += acc.item()
    return total


# pytorch-wgan inception_score.py: eval() in the outer function, the forward in a
# closure that it calls batch by batch.
def inception_score(inception_model, batches):
    inception_model.eval()

    def get_pred(x):
        x = inception_model(x)  # error: GL004
        return F.softmax(x, dim=1).data.cpu().numpy()

    preds = []
    for batch in batches:
        preds.append(get_pred(batch))
    return preds


# PyTorch-GAN esrgan.py: a frozen feature extractor in eval mode whose output is
# detached at once, in every training step.
def esrgan(generator, feature_extractor, batches, opt):
    feature_extractor.eval()
    for imgs_lr, imgs_hr in batches:
        gen_hr = generator(imgs_lr)
        gen_features = feature_extractor(gen_hr)
        real_features = feature_extractor(imgs_hr).detach()  # error: GL004
        loss = F.l1_loss(gen_features, real_features)
        opt.zero_grad()
        loss.backward()
        opt.step()


# `m = Net().eval()` chained, then a forward whose result is only read as a number.
def chained_eval(make_net, x):
    net = make_net().eval()
    y = net(x)  # error: GL004
    return y.argmax().item()


# `model.train(False)` is eval mode too.
def train_false(model, loader):
    model.train(False)
    correct = 0
    for x, t in loader:
        out = model(x)  # error: GL004
        correct += (out.argmax(1) == t).sum().item()
    return correct
