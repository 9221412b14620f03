#!/usr/bin/env python3
"""Start Hudson's fake Gmail server (see README.md next to this file)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fakegmail import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
