"""Variable-length sequence classification with torch.nn.utils.rnn, the way the PyTorch text
tutorials batch sentences: pad_sequence(batch_first=True), pack_padded_sequence(...,
enforce_sorted=False) into a 2-layer GRU and an LSTM, h_n[-1] as the sentence vector,
pad_packed_sequence for masked mean pooling, and a Dataset whose collate_fn pads. Weights
come from NumPy, so both libraries print the same losses."""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

VOCAB, PAD = 12, 0


class ParityDataset(Dataset):
    """Label: whether token 1 occurs an odd number of times in a sequence of length 2..9."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.items = []
        for _ in range(n):
            length = int(rng.integers(2, 10))
            seq = rng.integers(1, VOCAB, size=length)
            self.items.append((torch.from_numpy(seq.astype(np.int64)), int((seq == 1).sum() % 2)))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=PAD), lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self, emb=8, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, emb, padding_idx=PAD)
        self.gru = nn.GRU(emb, hidden, num_layers=2, batch_first=True)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.fc = nn.Linear(3 * hidden, 2)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, h_gru = self.gru(packed)
        out, (h_lstm, _) = self.lstm(packed)
        padded, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        mask = (torch.arange(tokens.size(1)).unsqueeze(0) < out_lengths.unsqueeze(1)).float().unsqueeze(-1)
        pooled = (padded * mask).sum(1) / out_lengths.unsqueeze(1).float()
        return self.fc(torch.cat([h_gru[-1], h_lstm[-1], pooled], dim=1))


torch.manual_seed(0)
model = Classifier()
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
    model.embedding.weight[PAD].zero_()
train_loader = DataLoader(ParityDataset(256, 0), batch_size=32, collate_fn=collate)
test_loader = DataLoader(ParityDataset(96, 1), batch_size=48, collate_fn=collate)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
history, tests = [], []
for epoch in range(4):
    model.train()
    for tokens, lengths, labels in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens, lengths), labels)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    model.eval()
    with torch.no_grad():
        total = sum(F.cross_entropy(model(t, l), y, reduction="sum").item() for t, l, y in test_loader)
    tests.append(total / len(test_loader.dataset))
    print(f"epoch {epoch}: train {loss:.4f} test {tests[-1]:.4f}")
print("RESULT " + json.dumps({"train": history, "test": tests}))
