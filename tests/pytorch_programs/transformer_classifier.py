"""Text classification with nn.TransformerEncoder (batch_first=True) in the form of the
PyTorch text tutorials: token + learned position embeddings, src_key_padding_mask from the
padding, masked mean pooling, label-smoothed CrossEntropyLoss, AdamW with a LambdaLR warmup,
torch.nn.utils.clip_grad_norm_, evaluation with @torch.no_grad(). Dropout is 0 and weights
come from NumPy, so both libraries follow the same trajectory."""
import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0
VOCAB = 20
MAXLEN = 12


def make_data(n, seed):
    """Label 1 when token 3 appears before token 4 in the sequence, else 0."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, MAXLEN), np.int64)
    y = np.zeros(n, np.int64)
    for i in range(n):
        length = rng.integers(5, MAXLEN + 1)
        seq = rng.integers(5, VOCAB, size=length)
        a, b = rng.choice(length, size=2, replace=False)
        seq[a], seq[b] = 3, 4
        x[i, :length] = seq
        y[i] = int(a < b)
    return torch.from_numpy(x), torch.from_numpy(y)


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, d_model=32, nhead=4, num_layers=2, num_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, MAXLEN, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=num_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, num_classes)
        self.d_model = d_model

    def forward(self, tokens):
        padding_mask = tokens == PAD
        x = self.embed(tokens) * math.sqrt(self.d_model) + self.pos[:, :tokens.size(1)]
        x = self.encoder(x, src_key_padding_mask=padding_mask)
        keep = (~padding_mask).unsqueeze(-1).float()
        pooled = (x * keep).sum(dim=1) / keep.sum(dim=1)
        return self.fc(self.norm(pooled))


def numpy_init(model):
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                bound = math.sqrt(6.0 / (p.shape[-1] + p.shape[-2]))
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape)).astype(np.float32)))
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            else:
                for p in m.parameters(recurse=False):
                    if p.dim() == 1:
                        nn.init.zeros_(p)
        model.embed.weight[PAD].zero_()


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    logits = model(x)
    loss = F.cross_entropy(logits, y).item()
    acc = (logits.argmax(-1) == y).float().mean().item()
    model.train()
    return loss, acc


torch.manual_seed(0)
x_train, y_train = make_data(384, 0)
x_val, y_val = make_data(128, 1)
model = TextClassifier(VOCAB)
numpy_init(model)
criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
warmup = 10
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
history, vals = [], []
for epoch in range(4):
    for i in range(0, len(x_train), 32):
        xb, yb = x_train[i:i + 32], y_train[i:i + 32]
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(xb), yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        history.append(loss.item())
    vals.append(evaluate(model, x_val, y_val))
    print(f"epoch {epoch}: train loss {loss:.4f}, val loss {vals[-1][0]:.4f}, val acc {vals[-1][1]:.3f}")
print("RESULT " + json.dumps({"train": history, "val": vals}))
