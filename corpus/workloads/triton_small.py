"""triton_small.py - vgtrace corpus workload: one Triton kernel (out = a*x + y with a mask, 2^16 int32
values in blocks of 1024) compiled and launched through the driver API (cuModuleLoadData, cuLaunchKernel*),
sized for a small trace. Integer arithmetic only: exact, checked on the host.
Prints: RESULT triton_small ok n=65536 sum=<sum> hash=<blake2b-64 of the values>; exit 0, or 1 on failure."""
import hashlib
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, a * x + y, mask=m)


n = 1 << 16
x = torch.arange(n, device="cuda", dtype=torch.int32)
y = torch.arange(n, device="cuda", dtype=torch.int32) % 97
out = torch.empty_like(x)
axpy[(triton.cdiv(n, 1024),)](x, y, out, 3, n, BLOCK=1024)
vals = out.cpu().tolist()
ref = [3 * i + i % 97 for i in range(n)]
if vals != ref:
    print("FAIL triton_small: results differ from the host's", file=sys.stderr)
    sys.exit(1)
h = hashlib.blake2b(str(vals).encode(), digest_size=8).hexdigest()
print(f"RESULT triton_small ok n={n} sum={sum(vals)} hash={h}")
