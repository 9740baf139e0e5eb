"""The import page's form: a JSON document, or a TREC run with its qrels and topics."""

from django import forms

from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Profile, Scale

KIND_CHOICES = [("json", "Evaluation document (JSON)"), ("trec", "TREC run and qrels")]


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="json")
    document = forms.FileField(required=False, help_text="relevo.evaluation/1 JSON")
    run = forms.FileField(required=False, help_text="qid Q0 docno rank score tag")
    qrels = forms.FileField(required=False, help_text="qid iteration docno grade")
    topics = forms.FileField(required=False, help_text="qid<TAB>keyword text (optional)")
    name = forms.CharField(max_length=200, required=False)
    # The TREC fields are checked in clean(), only when TREC files are imported.
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED, required=False)
    profile = forms.ChoiceField(choices=Profile.choices, initial=Profile.TREC, required=False)
    metrics = forms.CharField(
        initial="ndcg@10, precision@5", help_text="metric@k, separated by commas", required=False
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
