# A small DDP training over gloo, for the real torchrun tests: every worker fits y = 3x + 1
# on its own data (seeded by its rank); DistributedDataParallel averages the gradients, so all
# ranks end with the same weights. Each writes to its working directory
# trained-<rank>.txt: "<rank> <world size> <first loss> <last loss> <weight> <bias>".
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank = dist.get_rank()
world = dist.get_world_size()
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Linear(1, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.Generator().manual_seed(rank + 1)
losses = []
for step in range(60):
    x = torch.rand(16, 1, generator=data)
    loss = torch.nn.functional.mse_loss(model(x), 3 * x + 1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
weight = model.module.weight.item()
bias = model.module.bias.item()
with open(os.path.join(os.getcwd(), f"trained-{rank}.txt"), "w") as f:
    f.write(f"{rank} {world} {losses[0]:.6f} {losses[-1]:.6f} {weight:.6f} {bias:.6f}\n")
print(f"rank {rank} of {world}: loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
dist.destroy_process_group()
