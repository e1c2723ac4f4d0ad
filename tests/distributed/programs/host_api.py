"""The host side of symmetric memory under `cutelab run` without a GPU, as 2+ ranks: each check prints
one line; rank 0's lines are compared by the test."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import nvshmem.core

dist.init_process_group(backend="cpu:gloo,cuda:nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
out = []
out.append(f"devices {torch.cuda.device_count()} current {torch.cuda.current_device()}")

t = symm_mem.empty((4, 8), dtype=torch.float32, device=f"cuda:{rank}")
hdl = symm_mem.rendezvous(t, dist.group.WORLD)
out.append(f"handle rank {hdl.rank} world {hdl.world_size} device {t.device} is_cuda {t.is_cuda}")
t.fill_(float(rank))
dist.barrier()
peer = (rank + 1) % world
pt = hdl.get_buffer(peer, (4, 8), torch.float32)
out.append(f"peer buffer holds {pt.sum().item() / 32:.0f} (its rank {peer})")
pt[0, 0] = 100.0 + rank  # write into the peer's buffer
pad = hdl.get_signal_pad(peer, (4,), torch.int32)
pad[rank % 4] = 7
dist.barrier()
out.append(f"written by the previous rank: {t[0, 0].item():.0f}, signal {hdl.get_signal_pad(rank, (4,), torch.int32)[(rank - 1) % world % 4].item()}")
out.append(f"buffer_ptrs distinct {len(set(hdl.buffer_ptrs)) == world}")
mc = hdl.multicast_ptr  # an address of its own; on the host it reads this rank's copy
mcv = __import__("cutlass.torch", fromlist=["as_tensor"]).as_tensor(mc, (4, 8), torch.float32)
out.append(f"multicast_ptr distinct {mc not in hdl.buffer_ptrs}, reads this rank's copy {mcv[0, 0].item():.0f}, "
           f"is_cuda {mcv.is_cuda}")
out.append(f"peer access {torch.cuda.can_device_access_peer(0, 1)} {torch.cuda.can_device_access_peer(1, 1)}")
import cutlass.torch as cutlass_torch  # noqa: E402

view = cutlass_torch.as_tensor(hdl.buffer_ptrs[peer], (4, 8), torch.float32)  # the peer's buffer by address
out.append(f"as_tensor of the peer's buffer: {view[1, 1].item():.0f}, is_cuda {view.is_cuda}")
from torch._C._autograd import DeviceType  # noqa: E402
from torch._C._distributed_c10d import _SymmetricMemory  # noqa: E402

out.append(f"has_multicast_support {_SymmetricMemory.has_multicast_support(DeviceType.CUDA, 0)}")
try:  # one element past the peer's mapping (its buffer, then its signal pad)
    cutlass_torch.as_tensor(hdl.buffer_ptrs[peer], ((hdl.buffer_size + hdl.signal_pad_size) // 4 + 1,), torch.float32)
except NotImplementedError as e:
    out.append(f"as_tensor past the end: {str(e).split(':')[0]} refused {'runs past its end' in str(e)}")

uid = nvshmem.core.get_unique_id(empty=(rank != 0))
ub = torch.from_numpy(uid._data.view(np.uint8).copy()).cuda()
dist.broadcast(ub, src=0)
nvshmem.core.init(device=None, uid=uid, rank=rank, nranks=world, initializer_method="uid")
x = nvshmem.core.tensor((16,), dtype=torch.int32)
x.fill_(rank)
dist.barrier()
peers = [nvshmem.core.get_peer_tensor(x, r) for r in range(world)]
out.append(f"nvshmem peers {[int(p[3]) for p in peers]} pe {nvshmem.core.my_pe()} of {nvshmem.core.n_pes()}")
xm = nvshmem.core.get_multicast_tensor(nvshmem.core.Teams.TEAM_NODE, x[4:])
out.append(f"get_multicast_tensor {tuple(xm.shape)} at a new address {xm.data_ptr() != x[4:].data_ptr()}, "
           f"holds {int(xm[0])}")
try:
    nvshmem.core.get_multicast_tensor(nvshmem.core.Teams.TEAM_NODE, peers[(rank + 1) % world])
except ValueError as e:
    out.append("get_multicast_tensor of a peer's: " + str(e).split(": ", 1)[1][:40])
nvshmem.core.free_tensor(xm)
try:
    nvshmem.core.put(x, x)
except AttributeError as e:
    out.append("put: " + str(e).split(" (")[0])
nvshmem.core.free_tensor(x)
nvshmem.core.finalize()
dist.barrier()
if rank == 0:
    print("\n".join(out))
dist.destroy_process_group()
