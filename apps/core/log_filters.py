"""Logging filters the settings' LOGGING attaches."""

import logging

from django.core.exceptions import PermissionDenied


class RefusalWithoutTraceback(logging.Filter):
    """A role refused a page (403) is an everyday answer, not a failure: Django logs it
    with the exception's traceback, which would bury real errors. Keep its one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], PermissionDenied):
            record.exc_info = None
            record.exc_text = None
        return True
