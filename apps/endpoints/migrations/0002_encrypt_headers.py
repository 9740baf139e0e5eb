"""Search endpoints' and search models' headers encrypted at rest: each row's headers are
copied into an encrypted column, which then takes the old column's name."""

from django.db import migrations

from apps.core.encrypted_json import EncryptedJSONField

MODELS = ("searchendpoint", "searchmodel")


def _copy(apps, from_field: str, to_field: str) -> None:
    for name in MODELS:
        model = apps.get_model("endpoints", name)
        for row in model.objects.only("id", from_field).iterator():
            setattr(row, to_field, getattr(row, from_field))
            row.save(update_fields=[to_field])


def encrypt(apps, schema_editor) -> None:
    _copy(apps, "headers", "headers_encrypted")


def decrypt(apps, schema_editor) -> None:
    _copy(apps, "headers_encrypted", "headers")


def _encrypted_field() -> EncryptedJSONField:
    return EncryptedJSONField(blank=True, default=list, help_text="[[name, value], ...]")


class Migration(migrations.Migration):
    dependencies = [("endpoints", "0001_initial")]

    operations = [
        *(
            migrations.AddField(model_name=name, name="headers_encrypted", field=_encrypted_field())
            for name in MODELS
        ),
        migrations.RunPython(encrypt, decrypt),
        *(migrations.RemoveField(model_name=name, name="headers") for name in MODELS),
        *(
            migrations.RenameField(
                model_name=name, old_name="headers_encrypted", new_name="headers"
            )
            for name in MODELS
        ),
    ]
