"""Claims to be clean, but the process is killed in the middle (as a segfault would be).

clean
"""

import os
import signal
import sys


def main(n: int = 2, device: str = "cpu"):
    print("about to die", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
