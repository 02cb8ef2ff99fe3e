"""torch_small.py - vgtrace corpus workload: one PyTorch training step on the GPU: a linear model's forward
pass, a squared-error loss, autograd's backward pass and a torch.optim.SGD step, on 1024 samples of 8
features (no cuBLAS: the forward is a multiply and a row sum). Sized for a trace of a megabyte or two.
Every value is a small integer or an integer times a power of two, so float32 holds each sum exactly in any
order: the loss and the updated weights are exact and checked against the host's integer arithmetic.
Prints: RESULT torch_small ok n=1024 loss=<loss> hash=<blake2b-64 of the updated weights x 2^20>; exit 0,
or 1 on failure."""
import hashlib
import sys

import torch

n, d = 1024, 8
LR_SHIFT = 20                       # learning rate 2^-20: the update is exact
w_true = [3, -2, 1, 0, -1, 2, -3, 1]
b_true = 5
rows = [[(i * 7 + j * 3) % 16 - 8 for j in range(d)] for i in range(n)]
targets = [sum(r[j] * w_true[j] for j in range(d)) + b_true for r in rows]

x = torch.tensor(rows, dtype=torch.float32, device="cuda")
t = torch.tensor(targets, dtype=torch.float32, device="cuda")
w = torch.nn.Parameter(torch.zeros(d, device="cuda"))
b = torch.nn.Parameter(torch.zeros(1, device="cuda"))
opt = torch.optim.SGD([w, b], lr=2.0 ** -LR_SHIFT)

opt.zero_grad()
pred = (x * w).sum(1) + b           # forward
loss = ((pred - t) ** 2).sum()
loss.backward()                     # backward
opt.step()                          # optimizer step
loss_v = int(loss.item())
got = [int(v * 2 ** LR_SHIFT) for v in torch.cat([w.detach(), b.detach()]).cpu().tolist()]

# the host: with zero weights the residual is -t, so grad w_j = -2 sum t_i x_ij and grad b = -2 sum t_i
ref_loss = sum(v * v for v in targets)
ref = [2 * sum(targets[i] * rows[i][j] for i in range(n)) for j in range(d)] + [2 * sum(targets)]
if loss_v != ref_loss or got != ref:
    print(f"FAIL torch_small: loss {loss_v} (host {ref_loss}), weights x 2^{LR_SHIFT} {got} (host {ref})",
          file=sys.stderr)
    sys.exit(1)
h = hashlib.blake2b(str(got).encode(), digest_size=8).hexdigest()
print(f"RESULT torch_small ok n={n} loss={loss_v} hash={h}")
