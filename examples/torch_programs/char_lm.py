"""A character-level language model (an embedding, a GRU-free LSTM and a linear head) trained
on a short text with Adam and gradient clipping, then sampled greedily."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "hello world, hello retrograd. the quick brown fox jumps over the lazy dog. " * 2


class CharLM(nn.Module):
    def __init__(self, vocab, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.rnn = nn.LSTM(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.head(out), state


def main():
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    model = CharLM(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    seq = 16
    for step in range(60):
        starts = torch.randint(0, len(data) - seq - 1, (8,))
        x = torch.stack([data[s:s + seq] for s in starts.tolist()])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts.tolist()])
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 19:
            print(f"step {step}: loss {loss.item():.4f}")
    with torch.no_grad():
        idx = torch.tensor([[stoi["h"]]])
        state, out = None, "h"
        for _ in range(20):
            logits, state = model(idx, state)
            idx = logits[:, -1].argmax(-1, keepdim=True)
            out += chars[idx.item()]
    print(repr(out))


if __name__ == "__main__":
    main()
