"""The import page's form: a JSON document, or a TREC run with its qrels and topics."""

from django import forms

from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Profile, Scale

KIND_CHOICES = [("json", "Evaluation document (JSON)"), ("trec", "TREC run and qrels")]


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="json")
    document = forms.FileField(
        required=False, label="JSON file", help_text="relevo.evaluation/1 JSON"
    )
    run = forms.FileField(required=False, label="Run file", help_text="qid Q0 docno rank score tag")
    qrels = forms.FileField(
        required=False, label="Qrels file", help_text="qid iteration docno grade"
    )
    topics = forms.FileField(
        required=False, label="Topics file", help_text="qid<TAB>keyword text (optional)"
    )
    name = forms.CharField(
        max_length=200,
        required=False,
        label="Name",
        help_text="A JSON document's own name when left empty; TREC files need one",
    )
    # The TREC fields are checked in clean(), only when TREC files are imported.
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED, required=False)
    profile = forms.ChoiceField(choices=Profile.choices, initial=Profile.TREC, required=False)
    metrics = forms.CharField(
        initial="ndcg@10, precision@5",
        label="Metrics",
        help_text="metric@k, separated by commas",
        required=False,
    )
    keep_rank = forms.BooleanField(required=False, help_text="keep the run's rank column")
    relevant_from = forms.IntegerField(
        required=False,
        initial=1,
        min_value=-100,
        max_value=100,
        label="Relevant from",
        help_text="Custom levels: the lowest relevant level (trec_eval -l); the levels are "
        "those the qrels hold",
    )
    zero_without_results = forms.BooleanField(
        required=False,
        label="Judged queries without results count as 0",
        help_text="as trec_eval -c; otherwise they are left out of the means",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("kind") == "json" and not data.get("document"):
            self.add_error("document", "Choose the JSON document to import.")
        if data.get("kind") == "trec":
            if not data.get("run"):
                self.add_error("run", "Choose the run file.")
            if not (data.get("name") or "").strip():
                self.add_error("name", "Name the new evaluation.")
            if not data.get("scale"):
                self.add_error("scale", "Choose the scale of the grades.")
            try:
                data["metric_list"] = parse_metric_list(data.get("metrics", ""))
            except ValueError as error:
                self.add_error("metrics", str(error))
        return data

    def problems(self) -> list[str]:
        """The form's errors as the import's problems, each after its field's label
        ("Run file: Choose the run file."), for a report shown away from the fields."""
        return [
            f"{self[field].label}: {message}" if field in self.fields else str(message)
            for field, messages in self.errors.items()
            for message in messages
        ]
