# programs/ holds CuTe DSL programs run as ranks (they import cutlass and torch.distributed):
# pytest must not import them itself.
import os
import sys

collect_ignore_glob = ["programs/*.py"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
