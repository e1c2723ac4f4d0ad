# The carried CUTLASS programs (programs/) are CuTe DSL code: test_tutorial_gemm.py runs them with
# `cutelab run` in subprocesses; pytest must not import them itself.
collect_ignore_glob = ["programs/*.py"]
collect_ignore = ["programs/cute"]  # kernel/rmsnorm and kernel/reduce, in CUTLASS's folders (rmsnorm.py imports reduce.py so)
