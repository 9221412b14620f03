"""``python3 -m fakegmail`` (with tools/fake-gmail on sys.path) = fake_gmail.py."""
import sys

from . import main

sys.exit(main())
