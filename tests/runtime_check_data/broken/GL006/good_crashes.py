"""Claims to be clean, but the process dies in the middle (as a segfault would).

clean
"""

import os
import sys


def main(n: int = 2, device: str = "cpu"):
    print("about to die", file=sys.stderr, flush=True)
    os._exit(3)
