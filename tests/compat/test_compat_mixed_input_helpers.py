"""cutlass.utils.mixed_input_helpers (CUTLASS's Blackwell mixed-input GEMMs): the scale tensor's layouts and the
host's checks. The expected lines are what CuTe DSL 4.8.1 prints for the same program (CUTE_DSL_ARCH=sm_100a,
/work/dslenv/bin/python), run on this machine on 2026-11-28."""
from compat_helpers import ok, run

PROG = """
import cutlass, cutlass.cute as cute
import cutlass.utils.mixed_input_helpers as mih
from cutlass.cute.nvgpu import OperandMajorMode as M

@cute.jit
def f():
    print(mih.get_gmem_layout_scale((256, 512, 2), 1, 128, M.MN))
    print(mih.get_gmem_layout_scale((256, 512, 2), 1, 128, M.K))
    t, a, b = mih.get_smem_layout_scale((128, 128, 64), False, 1, 128, M.MN, cutlass.BFloat16, 3)
    print(t, a, b)
    t, a, b = mih.get_smem_layout_scale((256, 128, 128), True, 1, 256, M.MN, cutlass.BFloat16, 2)
    print(t, a, b)
    print(cute.dice(cute.make_layout(((128, 16), (1, 8)), stride=((1, 0), (0, 0))), (1, (1, 1))))

f()
print(mih.get_divisibility(96), mih.get_divisibility(1024), mih.get_divisibility(7),
      mih.is_valid_scale_granularity(1, 128, cutlass.Int4, 512, 128),
      mih.is_valid_scale_granularity(1, 96, cutlass.Int4, 512, 128),
      mih.is_valid_mma_tiler_and_cluster_shape((256, 128, 64), (2, 1), True),
      mih.is_valid_mma_tiler_and_cluster_shape((256, 128, 64), (1, 1), True))
print(mih.get_transform_a_source(M.K), mih.get_transform_a_source(M.MN))
"""

CUTE_DSL = """\
((1,256),(128,4),2):((0,1),(0,256),1024)
((1,256),(128,4),2):((0,4),(0,1),1024)
(128, 64) S<0,4,3> o 0 o ((1,128),(64,1)):((0,1),(0,128)) S<0,4,3> o 0 o ((1,128),(64,1),3):((0,1),(0,128),128)
(128, 128) S<0,4,3> o 0 o ((1,128),(128,1)):((0,1),(0,128)) S<0,4,3> o 0 o ((1,128),(128,1),2):((0,1),(0,128),128)
((128,16),1,8):((1,0),0,0)
32 128 1 True False True False
OperandSource.TMEM OperandSource.SMEM"""


def test_scale_layouts_and_checks_as_cute_dsl(tmp_path):
    out = ok(run(tmp_path, PROG, env={"CUTE_DSL_ARCH": "sm_100a"}))
    assert out.strip().splitlines() == CUTE_DSL.splitlines()
