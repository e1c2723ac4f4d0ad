# Programs under tests/compat/programs are CuTe DSL code (they import cutlass): the tests run them
# through `cutelab run` in subprocesses; pytest's --doctest-modules must not import them itself.
collect_ignore_glob = ["programs/*.py", "programs/flash_attn"]  # fnmatch: also the files in its subfolders
