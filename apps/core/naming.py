"""A name used once per team (judges, prompts, webhooks), checked where two saves may race."""

from django.db import IntegrityError, models, transaction

from apps.core.errors import InvalidInput


def save_with_unique_name(instance: models.Model, same_name: models.QuerySet, problem: str) -> None:
    """Save `instance`, or InvalidInput([problem]) when `same_name` (the team's objects of
    its name) holds another. Two saves of one name at once both pass the check; the
    database's unique constraint refuses the second, answered as the check would be."""
    if same_name.exclude(pk=instance.pk).exists():
        raise InvalidInput([problem])
    try:
        with transaction.atomic():
            instance.save()
    except IntegrityError:
        raise InvalidInput([problem]) from None
