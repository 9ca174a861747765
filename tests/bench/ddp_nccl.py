# A small DDP training over NCCL for tests/bench/gpu_slurm_e2e.sh: each worker trains an MLP
# on its own GPU (LOCAL_RANK) and data; DistributedDataParallel averages the gradients, so all
# ranks end with the same weights, which rank 0 checks with an all-gather. Exits non-zero on a
# mismatch. Reads the torchrun environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)
).cuda()
model = DistributedDataParallel(model, device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.Generator(device="cuda").manual_seed(rank + 1)
for step in range(int(os.environ.get("DDP_STEPS", "300"))):
    x = torch.randn(256, 1024, device="cuda", generator=data)
    loss = torch.nn.functional.mse_loss(model(x), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
checksum = torch.cat([p.detach().flatten() for p in model.parameters()]).sum().reshape(1)
sums = [torch.zeros_like(checksum) for _ in range(world)]
dist.all_gather(sums, checksum)
same = all(torch.equal(s, sums[0]) for s in sums)
print(f"rank {rank} of {world}: loss {loss.item():.5f}, weights equal on every rank: {same}",
      flush=True)
dist.destroy_process_group()
sys.exit(0 if same else 1)
