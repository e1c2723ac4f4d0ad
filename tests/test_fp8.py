"""8-bit floats: cutelab/fp8.py's conversions (bytes <-> float32), against torch's float8 types where
torch has them, and its CUDA C helpers (compiled for the host with g++) against the Python ones."""
import shutil
import subprocess

import numpy as np
import pytest

from cutelab import fp8
from cutelab.numeric import Float8E4M3FN, Float8E5M2

MAX = {Float8E4M3FN: 448.0, Float8E5M2: 57344.0}


def _samples(dt):
    rng = np.random.default_rng(0)
    table = fp8.to_f32(np.arange(256, dtype=np.uint8), dt)
    fin = np.sort(table[np.isfinite(table)])
    mids = (fin[:-1] + fin[1:]) / 2  # ties: round to the even code
    x = np.concatenate([rng.standard_normal(20000) * s for s in (1e-4, 1e-2, 1, 30, 1000, 40000)] + [fin, mids])
    return x.astype(np.float32)


@pytest.mark.parametrize("dt", [Float8E4M3FN, Float8E5M2], ids=str)
def test_decode_and_encode_match_torch(dt):
    torch = pytest.importorskip("torch")
    tdt = {Float8E4M3FN: getattr(torch, "float8_e4m3fn", None), Float8E5M2: getattr(torch, "float8_e5m2", None)}[dt]
    if tdt is None:
        pytest.skip("this torch has no float8 types")
    codes = np.arange(256, dtype=np.uint8)
    ref = torch.from_numpy(codes).view(tdt).float().numpy()
    assert np.array_equal(fp8.to_f32(codes, dt), ref, equal_nan=True)
    x = _samples(dt)
    x = x[np.abs(x) <= MAX[dt]]  # torch does not saturate: compare in range
    assert np.array_equal(fp8.from_f32(x, dt), torch.from_numpy(x).to(tdt).view(torch.uint8).numpy())


@pytest.mark.parametrize("dt", [Float8E4M3FN, Float8E5M2], ids=str)
def test_encode_saturates_and_keeps_nan(dt):
    b = fp8.from_f32(np.array([1e9, -1e9, np.inf, -np.inf, np.nan, -0.0, 0.0], np.float32), dt)
    v = fp8.to_f32(b, dt)
    assert v[:4].tolist() == [MAX[dt], -MAX[dt], MAX[dt], -MAX[dt]]
    assert np.isnan(v[4]) and b[5] == 0x80 and b[6] == 0
    # round trip of every finite value
    codes = np.arange(256, dtype=np.uint8)
    vals = fp8.to_f32(codes, dt)
    ok = np.isfinite(vals) & ~((codes == 0x80))
    assert np.array_equal(fp8.from_f32(vals[ok], dt), codes[ok])


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_cuda_helpers_match_the_python_conversions(tmp_path):
    prog = r'''
#include <cstdio>
#include <cstring>
#include <math.h>
#define __device__
#define __forceinline__ inline
static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
''' + fp8.CUDA_HELPERS + r'''
int main() {
  float x;
  while (scanf("%f", &x) == 1) printf("%u %u\n", cl_f32_to_e4m3(x), cl_f32_to_e5m2(x));
  for (int c = 0; c < 256; c++) printf("D %.9g %.9g\n", cl_e4m3_to_f32((unsigned char)c), cl_e5m2_to_f32((unsigned char)c));
}
'''
    (tmp_path / "h.cpp").write_text(prog)
    subprocess.run(["g++", "-O1", "-o", str(tmp_path / "h"), str(tmp_path / "h.cpp")], check=True)
    x = np.concatenate([_samples(Float8E4M3FN), _samples(Float8E5M2),
                        np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e6, 1e-30], np.float32)])
    text = "\n".join("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf") if np.isinf(v) else repr(float(v)) for v in x)
    out = subprocess.run([str(tmp_path / "h")], input=text, capture_output=True, text=True, check=True).stdout.splitlines()
    enc = np.array([[int(t) for t in line.split()] for line in out if not line.startswith("D")])
    assert np.array_equal(enc[:, 0], fp8.from_f32(x, Float8E4M3FN))
    assert np.array_equal(enc[:, 1], fp8.from_f32(x, Float8E5M2))
    dec = np.array([[float(t) for t in line.split()[1:]] for line in out if line.startswith("D")], np.float32)
    codes = np.arange(256, dtype=np.uint8)
    assert np.array_equal(dec[:, 0], fp8.to_f32(codes, Float8E4M3FN), equal_nan=True)
    assert np.array_equal(dec[:, 1], fp8.to_f32(codes, Float8E5M2), equal_nan=True)


def test_e8m0_rounds_toward_plus_infinity_as_cute_dsl():
    # CuTe DSL 4.8.1 converts f32 to Float8E8M0FNU with cvt.rp.ue8m0x2.f32 (sm_100a): the smallest power of two not
    # below the value; torch's conversion rounds the mantissa to nearest (2.5 -> 2, 0.75 -> 1 there)
    x = np.array([1, 2, 3, 2.5, 0.75, 0.5 + 1e-7, 2.0 ** -127, 2.0 ** -126, 2.0 ** 127], np.float32)
    c = fp8.e8m0_from_f32(x)
    assert c.tolist() == [127, 128, 129, 129, 127, 127, 0, 1, 254]
    assert fp8.e8m0_to_f32(c).tolist() == [1, 2, 4, 4, 1, 1, 2.0 ** -127, 2.0 ** -126, 2.0 ** 127]
    # past 2^127, +inf and NaN: 0xFF (NaN; no .satfinite); zero, tiny and negative values: 0x00 (2^-127)
    edge = np.array([2.0 ** 127 * 1.5, np.inf, np.nan, 0.0, 1e-40, -1.0], np.float32)
    assert fp8.e8m0_from_f32(edge).tolist() == [255, 255, 255, 0, 0, 0]
    assert np.isnan(fp8.e8m0_to_f32(np.array([255], np.uint8))[0])
    torch = pytest.importorskip("torch")
    exact = np.ldexp(np.float32(1), np.arange(-126, 128)).astype(np.float32)  # powers of two: torch agrees
    assert fp8.e8m0_from_f32(exact).tolist() == torch.tensor(exact).to(torch.float8_e8m0fnu).view(torch.uint8).tolist()


def test_e8m0_tensors_from_torch_and_scalars():
    torch = pytest.importorskip("torch")
    from cutelab.numeric import Float8E8M0FNU
    from cutelab.runtime import from_dlpack

    assert (Float8E8M0FNU(3.0), Float8E8M0FNU(128.0), Float8E8M0FNU(0.3)) == (4.0, 128.0, 0.5)
    t = torch.tensor([1.0, 2.0, 0.25, 8.0]).to(torch.float8_e8m0fnu)
    ct = from_dlpack(t)
    assert ct.element_type is Float8E8M0FNU and [float(ct[i]) for i in range(4)] == [1.0, 2.0, 0.25, 8.0]
    ct[1] = 3.0  # stored rounded toward +infinity
    assert t.view(torch.uint8).tolist() == [127, 129, 125, 130]
