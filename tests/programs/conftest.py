# The programs are CuTe DSL code (they import cutlass): test_programs.py runs them in subprocesses
# with their imports rewritten; pytest's --doctest-modules must not import them itself.
collect_ignore_glob = ["nb_*.py", "own_*.py", "dsl_*.py"]
