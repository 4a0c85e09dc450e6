"""A character-level LSTM language model (batch_first=True) with the mixed-precision
boilerplate of current PyTorch training scripts: torch.autocast(device_type=..., dtype=...,
enabled=...), torch.amp.GradScaler, optimizer.zero_grad(set_to_none=True), clip_grad_norm_
after scaler.unscale_, a StepLR schedule, and text generation with temperature,
torch.multinomial and a torch.Generator. Autocast is off on the CPU (as such scripts set it),
weights come from NumPy, so the losses match; the sampled text is checked for validity."""
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

text = ("the quick brown fox jumps over the lazy dog. " * 20 +
        "pack my box with five dozen liquor jugs. " * 20)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=48, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embedding(x), state)
        return self.head(out), state


device = "cuda" if torch.cuda.is_available() else "cpu"
device_type = "cuda" if device.startswith("cuda") else "cpu"
use_amp = device_type == "cuda"
torch.manual_seed(0)
model = CharLSTM(len(chars)).to(device)
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.15, 0.15, size=tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
scaler = torch.amp.GradScaler(device_type, enabled=use_amp)
seq_len, batch = 24, 16
starts = np.random.default_rng(1).integers(0, len(data) - seq_len - 1, size=(50, batch))
history = []
for step in range(50):
    idx = torch.from_numpy(starts[step])
    x = torch.stack([data[i:i + seq_len] for i in idx.tolist()]).to(device)
    y = torch.stack([data[i + 1:i + seq_len + 1] for i in idx.tolist()]).to(device)
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=use_amp):
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    history.append(loss.item())
    if step % 10 == 0:
        print(f"step {step:3d} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")


@torch.no_grad()
def generate(model, prompt, n, temperature=0.8, generator=None):
    model.eval()
    x = torch.tensor([[stoi[c] for c in prompt]], dtype=torch.long, device=device)
    logits, state = model(x)
    out = list(prompt)
    for _ in range(n):
        probs = F.softmax(logits[:, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1, generator=generator)
        out.append(itos[nxt.item()])
        logits, state = model(nxt, state)
    return "".join(out)


g = torch.Generator().manual_seed(123)
sample = generate(model, "the ", 40, generator=g)
greedy = generate(model, "the ", 20, temperature=1e-4)
print(repr(sample))
print(repr(greedy))
assert len(sample) == 44 and set(sample) <= set(chars)
print("RESULT " + json.dumps({"train": history, "greedy": greedy}))
