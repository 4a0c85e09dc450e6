"""Word-level language model with a Transformer (a subclass of nn.Transformer), in the form of PyTorch's official
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


class PositionalEncoding(nn.Module):
    r"""Inject some information about the relative or absolute position of the tokens in the sequence."""

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)

        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers, num_decoder_layers=1, dropout=dropout)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)

        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None

        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def numpy_init(model, seed):
    """Same starting point in every library: each parameter from one NumPy stream."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, size=tuple(p.shape)).astype(np.float32)))
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)


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


def main():
    torch.manual_seed(1111)
    device = torch.device("cpu")
    corpus = Corpus()
    train_data = batchify(corpus.train, 20, device)
    val_data = batchify(corpus.valid, 5, device)
    ntokens = len(corpus.dictionary)
    model = TransformerModel(ntokens, 16, 2, 32, 2, dropout=0.0).to(device)
    numpy_init(model, 0)
    criterion = nn.NLLLoss()
    lr, clip = 1.0, 0.25
    history = []

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output = model(data)
                output = output.view(-1, ntokens)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    def train(epoch):
        model.train()
        total_loss = 0.
        start_time = time.time()
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            output = model(data)
            output = output.view(-1, ntokens)
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
