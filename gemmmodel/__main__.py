import sys

from gemmmodel.cli import main

sys.exit(main())
