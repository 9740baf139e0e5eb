#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["trec_eval"]:
        # Scoring files needs neither the database nor the app: answer before Django
        # starts (the same command, apps/interchange/management/commands/trec_eval.py).
        from apps.trec_eval.cli import main as trec_eval

        sys.exit(trec_eval(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
