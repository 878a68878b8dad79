import sys

from benchwatch.cli import main

sys.exit(main())
