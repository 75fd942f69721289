import sys

from chatcodec.cli import main

sys.exit(main())
