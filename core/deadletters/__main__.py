"""`python -m core.deadletters list|show|replay|drop`: the operator's dead-letter command (core.deadletters.command)."""
import sys

from core.deadletters.command import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
