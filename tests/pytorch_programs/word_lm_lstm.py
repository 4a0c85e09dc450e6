"""Word-level language model with an LSTM, in the form of PyTorch's official
word_language_model example (model.py + main.py), on a small synthetic corpus.

Weights are drawn from NumPy after construction, and dropout is off, so two libraries
that implement the same maths print the same losses."""
import math
import json
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    """Sentences from a tiny grammar (the example reads wikitext-2 files)."""

    def __init__(self, seed=0):
        self.dictionary = Dictionary()
        rng = np.random.default_rng(seed)
        subjects = ["the cat", "a dog", "my friend", "the bird", "our teacher"]
        verbs = ["sees", "likes", "follows", "finds", "hears"]
        objects = ["the ball", "a tree", "the house", "a river", "the moon"]

        def text(n):
            words = []
            for _ in range(n):
                s = f"{subjects[rng.integers(5)]} {verbs[rng.integers(5)]} {objects[rng.integers(5)]} <eos>"
                words.extend(s.split())
            return words

        self.train = self.tokenize(text(600))
        self.valid = self.tokenize(text(40))

    def tokenize(self, words):
        for word in words:
            self.dictionary.add_word(word)
        idss = [self.dictionary.word2idx[w] for w in words]
        return torch.tensor(idss).type(torch.int64)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            raise ValueError("unknown rnn_type")
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


def numpy_init(model, seed):
    """Same starting point in every library: each parameter from one NumPy stream."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, size=tuple(p.shape)).astype(np.float32)))


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


bptt = 12


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def main(rnn_type="LSTM"):
    torch.manual_seed(1111)
    device = torch.device("cpu")
    corpus = Corpus()
    train_data = batchify(corpus.train, 20, device)
    val_data = batchify(corpus.valid, 5, device)
    ntokens = len(corpus.dictionary)
    model = RNNModel(rnn_type, ntokens, 16, 32, 2, dropout=0.0).to(device)
    numpy_init(model, 0)
    criterion = nn.NLLLoss()
    lr, clip = 5.0, 0.25
    history = []

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        hidden = model.init_hidden(5)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train(epoch):
        model.train()
        total_loss = 0.
        start_time = time.time()
        hidden = model.init_hidden(20)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            history.append(loss.item())
            if batch % 10 == 0 and batch > 0:
                cur_loss = total_loss / 10
                elapsed = time.time() - start_time
                print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | '
                      'loss {:5.2f} | ppl {:8.2f}'.format(
                          epoch, batch, len(train_data) // bptt, lr,
                          elapsed * 1000 / 10, cur_loss, math.exp(cur_loss)))
                total_loss = 0
                start_time = time.time()

    best_val_loss = None
    val_losses = []
    for epoch in range(1, 4):
        train(epoch)
        val_loss = evaluate(val_data)
        val_losses.append(val_loss)
        print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(epoch, val_loss, math.exp(val_loss)))
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
    print("RESULT " + json.dumps({"train": history, "valid": val_losses}))


if __name__ == "__main__":
    main()
