# A team's evaluation names become unique, trimmed and in any case.
# Evaluations that already share a name keep it in the oldest (lowest id); the others
# are renamed "Name (2)", "Name (3)"... in id order, each the first such name the team
# does not use, so the constraint can be added and a second run renames nothing.

import django.db.models.functions.text
from django.conf import settings
from django.db import migrations, models

NAME_LIMIT = 200


def renamed_duplicates(rows):
    """{id: new name} for (id, team id, name) rows: every evaluation but the oldest of
    each team's names that are equal once trimmed and lowercased."""
    taken = {(team_id, name.strip().lower()) for _, team_id, name in rows}
    seen = set()
    renamed = {}
    for evaluation_id, team_id, name in sorted(rows):
        key = (team_id, name.strip().lower())
        if key not in seen:
            seen.add(key)
            continue
        base = name.strip()
        number = 2
        while True:
            suffix = f" ({number})"
            candidate = base[: NAME_LIMIT - len(suffix)] + suffix
            if (team_id, candidate.lower()) not in taken:
                break
            number += 1
        taken.add((team_id, candidate.lower()))
        renamed[evaluation_id] = candidate
    return renamed


def rename_duplicates(apps, schema_editor):
    Evaluation = apps.get_model("evaluations", "Evaluation")
    rows = list(Evaluation.objects.order_by("id").values_list("id", "team_id", "name"))
    for evaluation_id, name in renamed_duplicates(rows).items():
        Evaluation.objects.filter(id=evaluation_id).update(name=name)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_session_names_its_person'),
        ('endpoints', '0001_initial'),
        ('evaluations', '0008_custom_scale_levels'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Back again, the names stay as renamed: nothing to undo.
        migrations.RunPython(rename_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='evaluation',
            constraint=models.UniqueConstraint(models.F('team'), django.db.models.functions.text.Lower('name'), name='evaluation_name_once_per_team', violation_error_message='An evaluation with this name already exists in this team.'),
        ),
    ]
