"""torch_small.py - vgtrace corpus workload: a few PyTorch operations on the GPU (no cuBLAS: elementwise
arithmetic, a scan, a selection, a reduction), on 2^16 int64 values, sized for a trace of about a megabyte.
Integer arithmetic only: the results are exact and checked on the host.
Prints: RESULT torch_small ok n=65536 sum=<sum> hash=<blake2b-64 of the values>; exit 0, or 1 on failure."""
import hashlib
import sys

import torch

n = 1 << 16
x = torch.arange(n, device="cuda", dtype=torch.int64)
y = (x * 3 + 7) % 1000
z = torch.cumsum(y, 0)
w = torch.where(z % 2 == 0, z // 2, z * 3 + 1)
total = int(w.sum().item())
vals = w.cpu().tolist()

ref, acc = [], 0
for i in range(n):
    acc += (i * 3 + 7) % 1000
    ref.append(acc // 2 if acc % 2 == 0 else acc * 3 + 1)
if vals != ref or total != sum(ref):
    print("FAIL torch_small: results differ from the host's", file=sys.stderr)
    sys.exit(1)
h = hashlib.blake2b(str(vals).encode(), digest_size=8).hexdigest()
print(f"RESULT torch_small ok n={n} sum={total} hash={h}")
