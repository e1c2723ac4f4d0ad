# Copyright (c) 2025 - 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause

# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are met:

# 1. Redistributions of source code must retain the above copyright notice, this
# list of conditions and the following disclaimer.

# 2. Redistributions in binary form must reproduce the above copyright notice,
# this list of conditions and the following disclaimer in the documentation
# and/or other materials provided with the distribution.

# 3. Neither the name of the copyright holder nor the names of its
# contributors may be used to endorse or promote products derived from
# this software without specific prior written permission.

# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
# AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
# IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
# FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
# DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
# SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
# CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
# OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
# OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

# From CUTLASS examples/python/CuTeDSL/cute/notebooks/print.ipynb, code cells 1, 21, 22 (cell numbers count all cells from 0), concatenated; torch replaced by numpy (the DSL used to record the outputs has no torch): torch.randn(4, 3, device='cuda') -> numpy with a seed; print_tensor_host(from_dlpack(a)), which compiles and launches, is cute.compile(print_tensor_host, from_dlpack(a)); lines marked '# [needs a GPU]' launch a kernel or check its result on the GPU and are commented out; the program compiles (traces) the kernels as a user without a GPU would, so the trace-time prints are compared.
# The notebook uses from_dlpack in cell 22 without importing it (its cell 1 does not): the import is added below.

import cutlass
import cutlass.cute as cute
import numpy as np

@cute.kernel
def print_tensor_gpu(src: cute.Tensor):
    print(src)
    cute.print_tensor(src)


@cute.jit
def print_tensor_host(src: cute.Tensor):
    print_tensor_gpu(src).launch(grid=(1, 1, 1), block=(1, 1, 1))

import numpy as np
np.random.seed(0)
from cutlass.cute.runtime import from_dlpack


def tensor_print_example4():
    a = np.random.randn(4, 3).astype(np.float32)
    # [needs a GPU] cutlass.cuda.initialize_cuda_context()
    cute.compile(print_tensor_host, from_dlpack(a))


tensor_print_example4()
