"""SnapshotDecision, moved here from the insights app with its table (state only)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("insights", "0002_snapshotdecision_moves_to_judging"),
        ("evaluations", "0008_custom_scale_levels"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SnapshotDecision",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("grade", models.SmallIntegerField()),
                        ("reason", models.TextField(blank=True)),
                        ("decided_at", models.DateTimeField()),
                        (
                            "decided_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "evaluation",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="evaluations.evaluation",
                            ),
                        ),
                        (
                            "snapshot",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="decision",
                                to="evaluations.snapshot",
                            ),
                        ),
                    ],
                    options={"db_table": "insights_snapshotdecision"},
                )
            ],
            database_operations=[],
        )
    ]
