"""``python -m eks_gpu_platform.validate``: see ``cli.py``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
