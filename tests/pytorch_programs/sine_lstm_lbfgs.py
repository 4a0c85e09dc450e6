"""Sine-wave prediction with two LSTMCells trained by LBFGS, in the form of PyTorch's
official examples/time_sequence_prediction (generate_sine_wave.py + train.py): the data is
a NumPy array written with torch.save and read back with torch.load; the model runs in
float64 (seq.double()). Weights come from NumPy so both libraries start equal."""
import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

HIDDEN = 16


def generate_sine_wave(path):
    np.random.seed(2)
    T = 20
    L = 60
    N = 12
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    torch.save(data, open(path, 'wb'))


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, HIDDEN)
        self.lstm2 = nn.LSTMCell(HIDDEN, HIDDEN)
        self.linear = nn.Linear(HIDDEN, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), HIDDEN, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == '__main__':
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, 'traindata.pt')
    generate_sine_wave(path)
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = torch.load(path, weights_only=False)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence()
    seq.double()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in seq.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.25, 0.25, size=tuple(p.shape))))
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=8)
    train_losses, test_losses = [], []
    # begin to train
    for i in range(4):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            train_losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = 20
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    assert y.shape == (3, 59 + 20)
    print("RESULT " + json.dumps({"train": train_losses, "test": test_losses}))
