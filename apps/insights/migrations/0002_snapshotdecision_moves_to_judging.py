"""SnapshotDecision moved to the judging app; its table stays (state only)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("insights", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="SnapshotDecision")],
            database_operations=[],
        )
    ]
