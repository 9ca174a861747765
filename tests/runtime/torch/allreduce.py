# One worker of a real gloo job: joins the process group from the torchrun environment
# (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; init_method env://), all-reduces its rank + 1
# and writes what it saw to OUT_DIR/rank-<RANK>.txt: "<rank> <world size> <sum> <local rank>",
# then TEST_MARK when the environment has it.
import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
world = dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
out = os.path.join(os.environ["OUT_DIR"], f"rank-{rank}.txt")
with open(out, "w") as f:
    mark = f" {os.environ['TEST_MARK']}" if "TEST_MARK" in os.environ else ""
    f.write(f"{rank} {world} {int(value.item())} {os.environ['LOCAL_RANK']}{mark}\n")
dist.destroy_process_group()
sys.exit(0)
