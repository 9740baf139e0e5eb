"""A JSON value kept encrypted at rest: a search endpoint's and a search model's headers,
which often carry credentials (an Authorization header, an API key).

The column holds the value's JSON text encrypted as apps/core/secrets.py encrypts an AI
judge's key; the model's attribute is the plain value, so the code that sends a request
reads it as before. Nothing can be looked up by it in SQL.
"""

import json
import logging
from typing import Any

from django.db import models

from .secrets import SecretUnreadable, decrypt_secret, encrypt_secret

logger = logging.getLogger(__name__)


class EncryptedJSONField(models.TextField):
    """JSON in a text column, encrypted. A value no configured key decrypts (the keys
    changed) reads as the field's default, and the log says which column, never a value:
    the lead enters it again, as for a judge's key."""

    # What the attribute holds, for django-stubs' type checker: the JSON value, not text.
    _pyi_private_set_type: Any
    _pyi_private_get_type: Any

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> Any:
        if value is None or value == "":
            return self.get_default()
        try:
            return json.loads(decrypt_secret(value))
        except SecretUnreadable:
            logger.error(
                "%s.%s: a stored value cannot be decrypted with SECRETS_ENCRYPTION_KEYS",
                self.model._meta.label,
                self.name,
            )
            return self.get_default()

    def to_python(self, value: Any) -> Any:
        # Text here is the stored form (a fixture that dumpdata wrote): decrypt it.
        if isinstance(value, str):
            return self.from_db_value(value, None, None)
        return value

    def get_prep_value(self, value: Any) -> str | None:
        if value is None:
            return None
        return encrypt_secret(json.dumps(value, ensure_ascii=False))

    def value_to_string(self, obj: models.Model) -> str:
        # What serialisation (dumpdata) writes: the stored, encrypted text.
        return self.get_prep_value(self.value_from_object(obj)) or ""
