"""The programs of PyTorch's "Learning PyTorch with Examples" tutorial, fitting sin(x) with
a third-order polynomial: raw tensors with manual gradients, autograd, a custom
torch.autograd.Function (LegendrePolynomial3), nn.Sequential with Flatten(0, 1) and
manual updates, optim.RMSprop, and a Module with nn.Parameter attributes. All
deterministic, so both libraries print the same numbers."""
import json
import math

import torch


dtype = torch.float
device = torch.device("cpu")
results = {}
steps = 300

# --- Tensors: gradients by hand --------------------------------------------------------
x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.1, device=device, dtype=dtype)
b = torch.full((), 0.2, device=device, dtype=dtype)
c = torch.full((), 0.3, device=device, dtype=dtype)
d = torch.full((), 0.4, device=device, dtype=dtype)
learning_rate = 1e-5
for t in range(steps):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, loss)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
results["manual"] = [loss, a.item(), b.item(), c.item(), d.item()]

# --- Autograd ----------------------------------------------------------------------------
a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
b = torch.tensor(0.2, dtype=dtype, requires_grad=True)
c = torch.tensor(0.3, dtype=dtype, requires_grad=True)
d = torch.tensor(0.4, dtype=dtype, requires_grad=True)
for t in range(steps):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
results["autograd"] = [loss.item(), a.item(), b.item(), c.item(), d.item()]


# --- A new autograd Function ------------------------------------------------------------
class LegendrePolynomial3(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(steps):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
results["function"] = [loss.item(), a.item(), b.item(), c.item(), d.item()]

# --- nn ----------------------------------------------------------------------------------
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.2, 0.3, 0.4]]))
    model[0].bias.fill_(0.1)
loss_fn = torch.nn.MSELoss(reduction='sum')
learning_rate = 1e-6
for t in range(steps):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
results["nn"] = [loss.item(), linear_layer.bias.item()] + linear_layer.weight.view(-1).tolist()

# --- optim -------------------------------------------------------------------------------
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.2, 0.3, 0.4]]))
    model[0].bias.fill_(0.1)
learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(steps):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
results["optim"] = [loss.item(), linear_layer.bias.item()] + linear_layer.weight.view(-1).tolist()


# --- Custom nn Modules --------------------------------------------------------------------
class Polynomial3(torch.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate four parameters and assign them as
        member parameters.
        """
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(0.2))
        self.c = torch.nn.Parameter(torch.tensor(0.3))
        self.d = torch.nn.Parameter(torch.tensor(0.4))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


model = Polynomial3()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(steps):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
assert len(list(model.parameters())) == 4
results["module"] = [loss.item(), model.a.item(), model.b.item(), model.c.item(), model.d.item()]
print("RESULT " + json.dumps(results))
