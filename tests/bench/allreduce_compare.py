#!/usr/bin/env python3
"""Compares mlenv-boot's NCCL self-test with torch.distributed.all_reduce (and nccl-tests'
all_reduce_perf when given) on the GPUs of one machine, size by size. A benchmark: it prints
numbers and fails only when a tool fails or a result is wrong.

usage: allreduce_compare.py MLENV_BOOT [--max-bytes N] [--gpus G] [--repeat R]
                             [--all-reduce-perf PATH]

The self-test times as nccl-tests' all_reduce_perf does by default (src/common.cu, BenchTime:
-w 1 warm-up call per size, then -n 20 calls launched back to back, wall time to the stream's
completion divided by 20); nccl-tests runs with those defaults, and torch the same way. float32
sums from 8 bytes doubling to --max-bytes. The self-test reduces out of place (send buffer into
receive buffer) and torch.distributed.all_reduce in place, so each is set beside nccl-tests'
column of the same kind: on one GPU an out-of-place all-reduce is a device copy and an in-place
one moves nothing, and busbw is 0 for every tool (2(n-1)/n with n = 1). The target (issue 23):
mlenv-boot within 1.1x of nccl-tests' out-of-place time at every size from 8 B.

Below 4 MiB one figure is 20 calls of a few microseconds: one preemption of the host thread moves
it by tens of percent, so one run of each tool cannot tell 1.1x from noise (two single runs of
the same code on two machines gave worst ratios of 1.34x and 1.66x). Each tool therefore runs
--repeat times (default 5), the runs of the two interleaved, and the ratio is of the per-size
medians; the spread (slowest/fastest run) of each is printed beside it.
"""
import statistics
import time
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def sizes(max_bytes):
    size = 8
    while size <= max_bytes:
        yield size
        size *= 2


ITERS = 20  # nccl-tests' -n default


def run_mlenv_boot(boot, max_bytes, gpus, workdir):
    config = {
        "format_version": 3, "job": "bench/allreduce", "rank": {"env": "JOB_COMPLETION_INDEX"},
        "rendezvous": {"host": "127.0.0.1", "host_env": "", "port": 29431},
        "nnodes": 1, "nproc_per_node": gpus, "gpus_per_node": gpus, "master_port": 29531,
        "transport": "tcp", "command": [], "services": [], "hostfile": "", "deepspeed_env": "",
        "nccl_check": {"min_busbw_gbps": 0, "max_bytes": max_bytes, "timeout_s": 300},
    }
    path = os.path.join(workdir, "boot.json")
    with open(path, "w") as f:
        json.dump(config, f)
    results = os.path.join(workdir, "results.json")
    subprocess.run([boot, "--config", path, "--node-rank", "0", "--nccl-check", "--results",
                    results], check=True, stdout=subprocess.DEVNULL)
    with open(results) as f:
        document = json.load(f)
    return document, {row["bytes"]: row["time_us"] for row in document["rows"]}


def torch_worker(rank, world, max_bytes, port, queue):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    buffer = torch.full((max_bytes // 4,), float(rank + 1), device="cuda")
    times = {}
    stream = torch.cuda.current_stream()
    for size in sizes(max_bytes):
        view = buffer[: size // 4]
        dist.all_reduce(view)
        stream.synchronize()
        start = time.perf_counter()
        for _ in range(ITERS):
            dist.all_reduce(view)
        stream.synchronize()
        times[size] = (time.perf_counter() - start) * 1e6 / ITERS
    if rank == 0:
        queue.put((torch.__version__, ".".join(map(str, torch.cuda.nccl.version())), times))
    dist.destroy_process_group()


def run_torch(max_bytes, gpus):
    try:
        import torch.multiprocessing as mp
    except ImportError:
        return None, None, {}
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=torch_worker, args=(r, gpus, max_bytes, 29631, queue))
                 for r in range(gpus)]
    for p in processes:
        p.start()
    result = queue.get(timeout=600)
    for p in processes:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"torch worker exited {p.exitcode}")
    return result


def run_nccl_tests(binary, max_bytes, gpus):
    out = subprocess.run([binary, "-b", "8", "-e", str(max_bytes), "-f", "2", "-g", str(gpus),
                          "-w", "1", "-n", str(ITERS), "-d", "float", "-o", "sum"],
                         check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        # size count type redop root, then time algbw busbw #wrong out of place, then in place.
        fields = line.split()
        if len(fields) >= 13 and fields[0].isdigit() and re.match(r"^[\d.]+$", fields[5]):
            times[int(fields[0])] = (float(fields[5]), float(fields[9]))
    return times


def medians(runs):
    """Per size: the median over the runs, and the slowest run over the fastest."""
    return ({size: statistics.median(run[size] for run in runs) for size in runs[0]},
            {size: max(run[size] for run in runs) / min(run[size] for run in runs)
             for size in runs[0]})


def run_interleaved(args):
    """Runs mlenv-boot and nccl-tests --repeat times each, alternating, so that a slow spell of
    the machine falls on both. Returns mlenv-boot's last document and every run's times."""
    boot_runs, perf_runs, document = [], [], None
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as workdir:
            document, times = run_mlenv_boot(args.mlenv_boot, args.max_bytes, args.gpus, workdir)
        if any(row["wrong"] for row in document["rows"]):
            sys.exit("mlenv-boot reported wrong values")
        boot_runs.append(times)
        if args.all_reduce_perf:
            perf_runs.append(run_nccl_tests(args.all_reduce_perf, args.max_bytes, args.gpus))
    return document, boot_runs, perf_runs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mlenv_boot")
    parser.add_argument("--max-bytes", type=int, default=1 << 30)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--all-reduce-perf")
    args = parser.parse_args()
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")
    document, boot_runs, perf_runs = run_interleaved(args)
    boot, boot_spread = medians(boot_runs)
    perf, perf_spread = {}, {}
    if perf_runs:
        oop, perf_spread = medians([{s: t[0] for s, t in run.items()} for run in perf_runs])
        ip, _ = medians([{s: t[1] for s, t in run.items()} for run in perf_runs])
        perf = {s: (oop[s], ip[s]) for s in oop}
    torch_version, torch_nccl, torch_times = run_torch(args.max_bytes, args.gpus)
    print(f"mlenv-boot: NCCL {document.get('nccl_version')}, status {document['status']}, "
          f"world {document.get('world_size')}; torch {torch_version} with NCCL {torch_nccl}")
    print(f"times in microseconds, medians of {args.repeat} runs (spread: slowest run / fastest); "
          "out of place: mlenv-boot and nccl-tests; in place: torch (one run) and nccl-tests")
    print(f"{'bytes':>12} {'mlenv-boot':>11} {'spread':>6} {'tests oop':>10} {'spread':>6}"
          f" {'ratio':>6} {'algbw GB/s':>11} {'torch':>9} {'tests ip':>9} {'ratio':>6}")
    for size in sizes(args.max_bytes):
        b, t = boot[size], torch_times.get(size, float("nan"))
        oop, ip = perf.get(size, (None, None))
        print(f"{size:>12} {b:>11.2f} {boot_spread[size]:>6.2f} "
              + (f"{oop:>10.2f} {perf_spread[size]:>6.2f} {b / oop:>6.2f}" if oop else " " * 24)
              + f" {size / b / 1e3:>11.2f} {t:>9.2f} "
              + (f"{ip:>9.2f} {t / ip:>6.2f}" if ip and torch_times else ""))
    if perf:
        ratios = {s: boot[s] / perf[s][0] for s in sizes(args.max_bytes) if s in perf}
        worst = max(ratios, key=ratios.get)
        print(f"mlenv-boot / nccl-tests (out of place) median time, worst size from 8 B: "
              f"{ratios[worst]:.3f} at {worst} B (target <= 1.1)")
        small = [ratios[s] for s in ratios if s < 4 << 20]
        if small:
            print(f"below 4 MiB: geometric mean {statistics.geometric_mean(small):.3f}")
    large = [s for s in sizes(args.max_bytes) if s >= 64 << 20 and s in perf]
    if large:
        mean = sum(boot[s] / perf[s][0] for s in large) / len(large)
        print(f"mlenv-boot / nccl-tests (out of place) time from 64 MiB: {mean:.3f}")
        if torch_times:
            mean = sum(torch_times[s] / perf[s][1] for s in large) / len(large)
            print(f"torch / nccl-tests (in place) time from 64 MiB: {mean:.3f}")


if __name__ == "__main__":
    main()
