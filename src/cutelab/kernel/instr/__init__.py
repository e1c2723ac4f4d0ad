"""Instructions inside kernels, one file per family: what each traces, its IR op, how the CUDA
printer prints it and how the CPU interpreter runs it.

``copy`` (universal copies) and ``gemm`` dispatch ``cute.copy``/``cute.gemm`` to ``cpasync``,
``ldmatrix``, ``tma_copy`` (which picks a TMA atom's form: ``tma`` loads, their multicast and 2-CTA
forms, ``tma_store``), ``mma_sync``, ``wgmma``, ``tcgen05_blockscaled`` and ``tcgen05_mma``;
``mbarrier`` holds SM90 barriers (``cluster`` has the arrive/expect_tx entry points, which also
reach a peer CTA's barrier),
``named_barrier`` named barriers (``bar.sync id, n``), ``cluster`` thread-block clusters (indices, the cluster barrier,
distributed shared memory and its element loads (``ld.shared::cluster``),
mbarrier ops on a peer CTA, TMA multicast), ``mathops`` ``cute.math``, ``printtensor``
``cute.print_tensor`` in a kernel; ``atomics`` the
memory-ordering instructions on global memory (``cute.arch.load``/``store`` with sem and scope,
atomics, ``red``, ``fence.acq_rel``, copy atoms with a memory order), ``bitcast`` ``vector.bitcast``,
``rmem_view`` a register fragment read as another type;
``inline_asm`` inline PTX (``llvm.inline_asm``, ``cute.arch.inline_ptx``; on shared-memory addresses
lowered to ``cluster``'s ops), run on the CPU by ``ptx``;
``tma_store`` TMA stores and the bulk async-groups; ``tma_map`` TMA loads and stores through tensor maps a
jit function built itself (``cutlass.experimental.cuda``); ``tensormap`` TMA descriptors kept in memory and
rewritten by the kernel (copy_tensormap, update_tma_descriptor, their fences, TMA through a descriptor
pointer, NVVM's TMA load op); ``tensormap_fields`` one field of such a descriptor (``tensormap.replace``) and the
words of a tensor-map parameter (the primitives' own descriptor copies); ``bulk_copy`` non-tensor bulk copies
(``cp.async.bulk`` into shared memory and back, the bulk f32 reduce-add into global memory); ``address_access`` pointers at runtime addresses (make_ptr of an Int64) and
their loads and stores, ``runtime_layout`` layouts with extents read in the kernel; SM100: ``tcgen05_tmem`` tensor memory (its
allocation and rules, ``tcgen05.ld/st``, the tcgen05 fences), ``tcgen05_mma`` the UMMA
(``tcgen05.mma``, ``tcgen05.commit``, the atom's runtime fields in kernels), ``tcgen05_2cta``
the TMA loads of 2-CTA UMMAs, ``tcgen05_cp`` the shared -> tensor memory copies (``tcgen05.cp``),
``tcgen05_blockscaled`` the block-scaled UMMAs (scale-factor formats, where they are read in TMEM,
the SFA/SFB fields); ``thread_exit`` PTX ``exit`` (threads leaving the kernel early).

May import: ``cutelab``'s core and atoms, ``kernel.ir``, ``kernel.frontend``, and the back
ends' contexts. An op's ``cuda(self, ctx)`` prints only through ``ctx``, the CUDA printer's
``cuda.lowering.LoweringContext`` (tests/kernel/test_passes.py checks it).
"""
