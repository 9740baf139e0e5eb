from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0004_chains"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="failing_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="reserved_calls",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="reserved_cost",
            field=models.DecimalField(decimal_places=6, default=0, max_digits=12),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="reserved_tokens",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="judgerun",
            name="reserved_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="status",
            field=models.CharField(
                choices=[
                    ("running", "Running"),
                    ("paused", "Paused"),
                    ("cancelled", "Cancelled"),
                    ("finished", "Finished"),
                    ("budget_reached", "Budget reached"),
                    ("failed", "Failed"),
                ],
                default="running",
                max_length=16,
            ),
        ),
    ]
