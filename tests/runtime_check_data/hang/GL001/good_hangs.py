"""Claims to be clean, but never returns.

clean
"""

import time


def main(n: int = 2, device: str = "cpu"):
    while True:
        time.sleep(1)
