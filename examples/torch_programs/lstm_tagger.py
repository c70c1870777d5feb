"""Part-of-speech tagging with an LSTM, after PyTorch's "Sequence Models and LSTM Networks"
tutorial."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

TRAINING = [
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"]),
]


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        return F.log_softmax(tag_space, dim=1)


def prepare(seq, to_ix):
    return torch.tensor([to_ix[w] for w in seq], dtype=torch.long)


def main():
    torch.manual_seed(1)
    word_to_ix = {}
    for sent, _ in TRAINING:
        for word in sent:
            word_to_ix.setdefault(word, len(word_to_ix))
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
    model = LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix))
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(30):
        total = 0.0
        for sentence, tags in TRAINING:
            model.zero_grad()
            loss = loss_function(model(prepare(sentence, word_to_ix)), prepare(tags, tag_to_ix))
            loss.backward()
            optimizer.step()
            total += loss.item()
        if epoch % 10 == 9:
            print(f"epoch {epoch}: loss {total:.4f}")
    with torch.no_grad():
        scores = model(prepare(TRAINING[0][0], word_to_ix))
        print([round(v, 4) for v in scores[0].tolist()], scores.argmax(1).tolist())


if __name__ == "__main__":
    main()
